// Internal helpers shared by the C files: TSan annotations, cache-line size,
// CPU relax. Not part of the public header.
#ifndef SPINDLE_INTERNAL_H
#define SPINDLE_INTERNAL_H

#include <stddef.h>

#define SPINDLE_CACHE_LINE 64

// The Linux-only system calls (futex for the parker, membarrier for the
// lanes) and their portable replacements (a condition variable; producers
// that fence for themselves). SPINDLE_PORTABLE (`-Xcc -DSPINDLE_PORTABLE`)
// builds the portable path on Linux too: one CI stage runs the lane and
// parker tests on it (scripts/portable.sh).
#if defined(__linux__) && !defined(SPINDLE_PORTABLE)
#  define SPINDLE_LINUX 1
#endif

// Created-minus-destroyed queues (spindle_live_queues).
void spindle_live_queues_add(long delta);

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define SPINDLE_TSAN 1
#  endif
#endif
#if defined(__SANITIZE_THREAD__)
#  define SPINDLE_TSAN 1
#endif

#ifdef SPINDLE_TSAN
// Why: liburcu's x86 atomics are inline assembly (and live in an
// uninstrumented shared library), so TSan cannot see the happens-before edge
// that an enqueue/dequeue pair creates. These tell it explicitly.
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#  define SPINDLE_TSAN_RELEASE(addr) __tsan_release((void *)(addr))
#  define SPINDLE_TSAN_ACQUIRE(addr) __tsan_acquire((void *)(addr))
#else
#  define SPINDLE_TSAN_RELEASE(addr) ((void)0)
#  define SPINDLE_TSAN_ACQUIRE(addr) ((void)0)
#endif

static inline void spindle_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

static inline size_t spindle_round_up(size_t value, size_t align) {
    return (value + align - 1) & ~(align - 1);
}

static inline size_t spindle_next_pow2(size_t value) {
    size_t p = 1;
    while (p < value) p <<= 1;
    return p;
}

#endif
