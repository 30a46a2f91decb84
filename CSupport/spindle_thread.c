// Thread naming: see spindle_thread_set_name in CSpindle.h for why it is here.
#define _GNU_SOURCE
#include "CSpindle.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#if defined(__linux__)
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

void spindle_thread_set_name(const char *name) {
#if defined(__APPLE__)
    pthread_setname_np(name);
#elif defined(__linux__)
    char truncated[16];
    strncpy(truncated, name, sizeof(truncated) - 1);
    truncated[sizeof(truncated) - 1] = '\0';
    pthread_setname_np(pthread_self(), truncated);
#else
    (void)name;
#endif
}

int spindle_current_cpu(void) {
#if defined(__linux__)
    return sched_getcpu();
#else
    return -1;
#endif
}

#if defined(__linux__) && defined(SYS_sched_setattr) && defined(SYS_sched_getattr)
// The kernel's struct sched_attr (version 1, with the utilization clamps),
// declared here: glibc declares it only from 2.41 on.
struct spindle_sched_attr {
    uint32_t size;
    uint32_t policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime;
    uint64_t deadline;
    uint64_t period;
    uint32_t util_min;
    uint32_t util_max;
};
enum { spindle_sched_other = 0, spindle_sched_reset_on_fork = 0x01 };

static int spindle_get_attr(struct spindle_sched_attr *attr) {
    memset(attr, 0, sizeof(*attr));
    return (int)syscall(SYS_sched_getattr, 0, attr, (unsigned)sizeof(*attr), 0u);
}

uint64_t spindle_thread_request_slice(uint64_t nanoseconds) {
    struct spindle_sched_attr attr;
    if (spindle_get_attr(&attr) != 0 || attr.policy != spindle_sched_other) return 0;
    // Everything the kernel reported is written back unchanged but the
    // slice: the nice value, and reset-on-fork (the one flag that is state,
    // not a request; the utilization clamps are not touched without theirs).
    attr.size = sizeof(attr);
    attr.flags &= spindle_sched_reset_on_fork;
    attr.runtime = nanoseconds;
    if (syscall(SYS_sched_setattr, 0, &attr, 0u) != 0) return 0;
    // A kernel before 6.12 accepts the field and ignores it, reporting 0.
    if (spindle_get_attr(&attr) != 0) return 0;
    return attr.runtime;
}

uint64_t spindle_thread_slice(int *policy, int *nice) {
    struct spindle_sched_attr attr;
    if (spindle_get_attr(&attr) != 0) return 0;
    *policy = (int)attr.policy;
    *nice = attr.nice;
    return attr.runtime;
}
#else
uint64_t spindle_thread_request_slice(uint64_t nanoseconds) {
    (void)nanoseconds;
    return 0;
}

uint64_t spindle_thread_slice(int *policy, int *nice) {
    *policy = -1;
    *nice = 0;
    return 0;
}
#endif

static _Thread_local void *current_pool;

void spindle_thread_set_pool(void *pool) {
    current_pool = pool;
}

void *spindle_thread_pool(void) {
    return current_pool;
}

// How many loop schedulings this thread is inside (CSpindle.h).
_Thread_local unsigned spindle_thread_slice_depth;
_Thread_local uint64_t spindle_thread_schedulings;
