// CSpindle: Thread Sanitizer support.
// One part of the module: CSpindle.h includes every part and gives the
// overview and the naming ladder.
#ifndef SPINDLE_TSAN_H
#define SPINDLE_TSAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Thread Sanitizer support

/// True when the C target was built with Thread Sanitizer.
bool spindle_tsan_enabled(void);

/// Test-only: a deliberately unsynchronized increment of a shared counter, so
/// that the stress suite can prove TSan reports real races (the canary).
void spindle_racy_increment(long *counter);

#ifdef __cplusplus
}
#endif

#endif // SPINDLE_TSAN_H
