#ifndef CSPSC_PROBE_H
#define CSPSC_PROBE_H

#include <stdint.h>

/// The machine's limit for moving events from one thread to another, measured
/// with the simplest fast design (benchmark harness only; never linked into
/// Spindle): a single-producer / single-consumer ring of 16-byte events, each
/// side publishing its index once per batch of up to 256 events and caching
/// the other side's index (the Disruptor's and FastFlow's shape).
///
/// Runs one producer and one consumer thread over `events` events and returns
/// the elapsed nanoseconds from the moment both threads are released to the
/// consumer's last read, or 0 when a thread could not be created or the
/// consumer saw an event out of order or corrupted (the figure is then void).
uint64_t cspsc_probe_run(uint64_t events);

#endif
