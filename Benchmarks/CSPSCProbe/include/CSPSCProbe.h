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

/// `latency-100k`'s workload on the machine alone, with no engine at all: a producer thread spins on the clock until each event's
/// slot on an absolute schedule of `interval_ns`, stamps it and publishes it
/// at once into an SPSC ring of 65,536 slots; a consumer thread spins on the
/// ring and writes now − stamp into `latencies[i]` for the i-th event after
/// the first `lead_in` (which run the same schedule unrecorded). Neither
/// thread ever sleeps, so what the latencies show beyond a cache-line
/// transfer is the machine: kernel threads and other processes taking a
/// core, the kernel's time slices, a hypervisor.
///
/// Returns the elapsed nanoseconds from the release of both threads to their
/// end, or 0 when a thread could not be created or a stamp lay in the
/// future (the figures are then void). `latencies` holds `events` values.
uint64_t cspsc_paced_run(uint64_t lead_in, uint64_t events, uint64_t interval_ns, uint64_t *latencies);

/// The latency-sporadic scenarios' limit (`futex` engine), no engine at all:
/// a producer thread sleeps `pause_ns` (0: not at all), stamps, writes a
/// request and wakes a consumer thread parked on a futex; the consumer writes
/// the answer and wakes the producer, which sleeps on its own futex until
/// then, and writes now − stamp into `latencies[i]`. Two wake-ups of a
/// parked thread per round trip, nothing else: what an engine that parks its
/// idle thread cannot beat by more than one wake-up.
///
/// Returns the elapsed nanoseconds from the release of both threads to their
/// end, or 0 when a thread could not be created or the consumer saw a
/// request out of order (the figures are then void). `latencies` holds
/// `events` values; `events` is at most 2^32 − 1.
uint64_t cfutex_sporadic_run(uint64_t events, uint64_t pause_ns, uint64_t *latencies);

/// `cfutex_sporadic_run` with the producer polling for the answer instead of
/// sleeping on it (`futex-one-wake` engine): one wake-up of a parked thread
/// per round trip and a poll, the shape of every engine's sporadic round
/// trip (the scenario's producer polls too) with nothing of an engine in it.
/// The floor an engine that parks its idle thread cannot go below. Same
/// return value and limits.
uint64_t cfutex_one_wake_run(uint64_t events, uint64_t pause_ns, uint64_t *latencies);

#endif
