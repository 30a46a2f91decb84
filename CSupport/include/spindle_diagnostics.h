// CSpindle: Diagnostics.
// One part of the module: CSpindle.h includes every part and gives the
// overview and the naming ladder.
#ifndef SPINDLE_DIAGNOSTICS_H
#define SPINDLE_DIAGNOSTICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Diagnostics

/// Queues created and not yet destroyed, process-wide (relaxed
/// counter; for leak checks). Any thread.
long spindle_live_queues(void);

#ifdef __cplusplus
}
#endif

#endif // SPINDLE_DIAGNOSTICS_H
