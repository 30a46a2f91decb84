// spindle_prefetch: asks the processor to start loading memory that the
// caller will read soon, so that several cache misses overlap instead of
// waiting one after another. Swift has no prefetch of its own.
//
// A hint only: it never faults (an address past an object's end is fine)
// and changes no value, so it needs no Thread Sanitizer annotation.
#ifndef SPINDLE_PREFETCH_H
#define SPINDLE_PREFETCH_H

#include <stddef.h>

/// Starts loading the cache lines of `bytes` bytes from `address`, for a write.
static inline __attribute__((always_inline)) void spindle_prefetch(const void *address, size_t bytes) {
    const char *line = (const char *)address;
    for (size_t offset = 0; offset < bytes; offset += 64) {
        __builtin_prefetch(line + offset, 1, 3);
    }
}

#endif
