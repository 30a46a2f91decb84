internal import Atomics
internal import CSpindle

extension PoolCore {
    /// The pool's sleeping threads: one bit per thread in a few words (64
    /// threads a word), beside the index of the thread that listed itself
    /// last, on one line for up to 7 words (a pool of up to 416 threads,
    /// with its 32 spares' places). A thread lists itself by setting its bit; a wake claims
    /// one thread by clearing its bit (a compare-and-exchange), which makes
    /// the waking thread the only one that may fill that thread's slot; a
    /// thread that wakes with its slot empty clears its own bit, and learns
    /// from the old word whether a wake claimed it first (PROTOCOL.md, "Pool
    /// threads: who wakes whom"; pool-wake.pml). One line for the emit to
    /// take from the sleeping thread's core, where a list under a lock is
    /// three (its lock, its count, its storage).
    ///
    /// Thread safety: any thread; each index belongs to one pool thread at a
    /// time (`PoolCore` hands them out).
    final class SleeperSet: Sendable {
        /// The sleepers' lines, by thread index (`Sleeper.stride` bytes
        /// each, line-aligned): each thread's slot, parker and activity. A
        /// wake finds a sleeper's line by its index alone, with no array or
        /// object to load first. nonisolated(unsafe): as `storage`.
        nonisolated(unsafe) private let sleeperLines: UnsafeMutableRawPointer
        private let sleeperStride: Int
        private let capacity: Int
        private let wordCount: Int
        /// Tests: pauses a wake waits between its claim and its store, to
        /// widen the window a leaving thread must wait out (0: none).
        private let pausesBeforeFill: Int
        // The words, then the last-listed index: atomics at fixed places of
        // one 64-byte-aligned allocation (an atomic object each would put
        // every word on a line of its own). nonisolated(unsafe): the pointer
        // never changes and is freed only in deinit; the memory is touched
        // only through `UnsafeAtomic`.
        nonisolated(unsafe) private let storage: UnsafeMutableRawPointer

        /// A set for thread indices `0..<capacity`.
        init(capacity: Int, pausesBeforeFill: Int = 0) {
            precondition(capacity > 0)
            self.pausesBeforeFill = pausesBeforeFill
            self.capacity = capacity
            sleeperStride = Sleeper.stride
            sleeperLines = .allocate(byteCount: capacity * sleeperStride, alignment: 64)
            for index in 0..<capacity { Sleeper.initialize(at: sleeperLines + index * sleeperStride) }
            wordCount = (capacity + 63) / 64
            let bytes = ((wordCount + 1) * 8 + 63) / 64 * 64
            storage = .allocate(byteCount: bytes, alignment: 64)
            for index in 0...wordCount { storage.initializeAtomic(at: index * 8, to: UInt64(0)) }
        }

        // The atomic representations need no deinitialization; the
        // parkers do (a mutex and a condition where they are not futexes).
        deinit {
            for index in 0..<capacity { Sleeper.deinitialize(at: sleeperLines + index * sleeperStride) }
            sleeperLines.deallocate()
            storage.deallocate()
        }

        /// Thread `index`'s line.
        @inline(__always)
        func sleeper(_ index: Int) -> Sleeper {
            Sleeper(line: sleeperLines + index * sleeperStride)
        }

        @inline(__always)
        private func word(_ index: Int) -> UnsafeAtomic<UInt64> {
            storage.atomic(at: index * 8)
        }

        /// atomic: the index of the thread that listed itself last. A hint
        /// for `claim` (the warmest cache, and on a machine whose idle cores
        /// halt, the core most likely still awake), never for the protocol.
        private var lastListed: UnsafeAtomic<UInt64> { word(wordCount) }

        @inline(__always)
        private static func place(_ index: Int) -> (word: Int, bit: UInt64) {
            (index >> 6, 1 << UInt64(index & 63))
        }

        /// Lists thread `index` (a sequentially consistent RMW: the Dekker
        /// pair with a schedule, which pushes, then reads the words). The
        /// thread's slot is empty and it is not listed.
        func list(_ index: Int) {
            let (word, bit) = Self.place(index)
            let old = self.word(word).loadThenBitwiseOr(with: bit, ordering: .sequentiallyConsistent)
            assert(old & bit == 0, "Spindle: a pool thread listed itself twice")
            lastListed.store(UInt64(index), ordering: .relaxed)
        }

        /// Thread `index`, woken with its slot empty (its own re-check, a
        /// timeout, a stray notify), takes itself off the set; true when a
        /// wake had claimed it first. Then that wake is between its claim
        /// and its store, and this waits until the slot is full: the thread
        /// must not list itself again before the store lands (it would fill
        /// the slot of a listed thread, which a second wake may claim and
        /// fill too). A few instructions of the waking thread, unless it was
        /// switched out between the two: then let it run.
        func leave(_ index: Int) -> Bool {
            let (word, bit) = Self.place(index)
            if self.word(word).loadThenBitwiseAnd(with: ~bit, ordering: .sequentiallyConsistent) & bit != 0 {
                return false
            }
            let slot = sleeper(index).slot
            var polls = 0
            while slot.load(ordering: .acquiring) == 0 {
                if polls < 64 {
                    spindle_cpu_relax()
                    polls &+= 1
                } else {
                    yieldThread()
                }
            }
            return true
        }

        /// Claims a sleeping thread (the one listed last, if it still is),
        /// fills its slot with `value` (a task's address or `Sleeper.look`)
        /// and notifies its parker; returns its index, nil when none is
        /// listed.
        func wake(handing value: UInt) -> Int? {
            guard let index = claim() else { return nil }
            let woken = sleeper(index)
            if pausesBeforeFill > 0 { for _ in 0..<pausesBeforeFill { spindle_cpu_relax() } }
            woken.wakerCore.store(spindle_current_cpu(), ordering: .relaxed)
            woken.slot.store(value, ordering: .releasing)
            woken.notify()
            return index
        }

        /// Wakes every sleeping thread with `Sleeper.look` in its slot (the
        /// pool exits).
        func wakeAll() {
            for index in claimAll() {
                let woken = sleeper(index)
                woken.slot.store(Sleeper.look, ordering: .releasing)
                woken.notify()
            }
        }

        /// Claims a listed thread (the one listed last, when it still is),
        /// taking it off the set; nil when none is listed. The caller alone
        /// may now fill that thread's slot, and must.
        private func claim() -> Int? {
            let hint = Int(truncatingIfNeeded: lastListed.load(ordering: .relaxed))
            let (hintWord, hintBit) = Self.place(hint)
            var bits = word(hintWord).load(ordering: .relaxed)
            while bits & hintBit != 0 {
                let (exchanged, original) = word(hintWord).compareExchange(
                    expected: bits, desired: bits & ~hintBit, ordering: .sequentiallyConsistent)
                if exchanged { return hint }
                bits = original
            }
            for index in 0..<wordCount {
                bits = word(index).load(ordering: .relaxed)
                while bits != 0 {
                    let pick: UInt64 = 1 << UInt64(63 - bits.leadingZeroBitCount)
                    let (exchanged, original) = word(index).compareExchange(
                        expected: bits, desired: bits & ~pick, ordering: .sequentiallyConsistent)
                    if exchanged { return index << 6 | pick.trailingZeroBitCount }
                    bits = original
                }
            }
            return nil
        }

        /// Claims every listed thread.
        private func claimAll() -> [Int] {
            var claimed: [Int] = []
            for index in 0..<wordCount {
                var bits = word(index).exchange(0, ordering: .sequentiallyConsistent)
                while bits != 0 {
                    claimed.append(index << 6 | bits.trailingZeroBitCount)
                    bits &= bits &- 1
                }
            }
            return claimed
        }

        /// Whether some thread looks listed: relaxed loads, a guess.
        @inline(__always)
        var looksNonEmpty: Bool {
            for index in 0..<wordCount where word(index).load(ordering: .relaxed) != 0 { return true }
            return false
        }

        /// Whether some thread is listed: sequentially consistent loads, for
        /// a caller whose last write was a sequentially consistent RMW or
        /// fence (the Dekker pair with `list`).
        @inline(__always)
        var isNonEmpty: Bool {
            for index in 0..<wordCount where word(index).load(ordering: .sequentiallyConsistent) != 0 { return true }
            return false
        }

        /// The threads listed now (tests, diagnostics).
        var count: Int {
            (0..<wordCount).reduce(0) { $0 + word($1).load(ordering: .sequentiallyConsistent).nonzeroBitCount }
        }
    }
}
