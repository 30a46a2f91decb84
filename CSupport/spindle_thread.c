// Thread naming: see spindle_thread_set_name in CSpindle.h for why it is here.
#define _GNU_SOURCE
#include "CSpindle.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

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
