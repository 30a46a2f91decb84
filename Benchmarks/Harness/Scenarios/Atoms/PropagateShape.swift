/// `atoms-propagate`'s graph, the same for every engine: S sources (state
/// atoms), each with 33 chains of three derived atoms (source → a → b → c),
/// so 100 atoms per source; 10 % of all atoms watched, drawn from a fixed
/// seed; and the sets, each a source drawn from the same generator.
///
/// Atoms are numbered: derived atom `d` (0 ..< 99 S) is level `d % 3` of
/// chain `(d % 99) / 3` of source `d / 99`; source `s` is atom `99 S + s`.
/// A derived atom's value is its parent's × 3 + 1 (wrapping): a bijection,
/// so every set changes every atom below it and nothing stops at an equal
/// value. The k-th set (from 0, the pre-pass's included) writes k + 1:
/// every set writes a value its source never had.
struct PropagateShape: Sendable {
    static let chainsPerSource = 33
    static let depth = 3
    static let derivedPerSource = chainsPerSource * depth
    static let atomsPerSource = derivedPerSource + 1
    /// One atom in ten is watched.
    static let watchedFraction = 10

    let sources: Int
    /// Per atom (derived first, then sources): watched or not.
    let watched: [Bool]
    /// Per derived atom: how many of it and the atoms below it in its
    /// chain are watched. An atom is in use (computed in a store, built in
    /// Combine) when this is positive; a plain computed property is
    /// evaluated this many times per change of its source.
    let watchedBelow: [UInt8]
    /// Per source: its watched atoms, itself included (the updates one set
    /// of it delivers).
    let watchedPerSource: [Int]
    /// The source of each measured set.
    let setSources: [Int32]

    var derivedCount: Int { sources * Self.derivedPerSource }
    var atomCount: Int { sources * Self.atomsPerSource }
    var watchedCount: Int { watched.lazy.filter { $0 }.count }

    init(sources: Int, sets: Int, seed: UInt64 = 0x5EED_0050) {
        self.sources = sources
        var generator = SplitMix64(seed: seed)
        let atoms = sources * Self.atomsPerSource
        let derived = sources * Self.derivedPerSource
        // A partial Fisher–Yates shuffle picks exactly 10 % of the atoms.
        var order = Array(0..<atoms)
        var watched = [Bool](repeating: false, count: atoms)
        for index in 0..<(atoms / Self.watchedFraction) {
            let pick = index + Int(generator.next() % UInt64(atoms - index))
            order.swapAt(index, pick)
            watched[order[index]] = true
        }
        var below = [UInt8](repeating: 0, count: derived)
        for chainBase in stride(from: 0, to: derived, by: Self.depth) {
            var count: UInt8 = 0
            for level in (0..<Self.depth).reversed() {
                if watched[chainBase + level] { count += 1 }
                below[chainBase + level] = count
            }
        }
        var perSource = [Int](repeating: 0, count: sources)
        for atom in 0..<atoms where watched[atom] {
            perSource[atom < derived ? atom / Self.derivedPerSource : atom - derived] += 1
        }
        self.watched = watched
        watchedBelow = below
        watchedPerSource = perSource
        setSources = (0..<sets).map { _ in Int32(truncatingIfNeeded: generator.next() % UInt64(sources)) }
    }

    /// The value of derived atom `level` levels below a source of `value`
    /// (level 0: the source itself).
    static func value(below source: Int, levels: Int) -> Int {
        var value = source
        for _ in 0..<levels { value = value &* 3 &+ 1 }
        return value
    }

    /// Checks what a run did against what the graph says it must do.
    /// `perDependent` is true for the engines that cache a derived value
    /// (each atom in use recomputed once per set of its source), false for
    /// plain computed properties (evaluated once per watched atom at or
    /// below it).
    func check(_ books: PropagateBooks, perDependent: Bool, in run: ScenarioRun) throws {
        var setsPerSource = [Int](repeating: 0, count: sources)
        for source in setSources { setsPerSource[Int(source)] += 1 }
        var wrong = 0
        var firstWrong = ""
        for atom in 0..<derivedCount {
            let below = Int(watchedBelow[atom])
            let perSet = perDependent ? min(below, 1) : below
            let expected = perSet * setsPerSource[atom / Self.derivedPerSource]
            let actual = Int(books.recomputations[atom])
            if actual != expected {
                if wrong == 0 { firstWrong = "derived atom \(atom) recomputed \(actual) times, expected \(expected)" }
                wrong += 1
            }
        }
        try expect(wrong == 0, "\(wrong) atoms recomputed a wrong number of times (first: \(firstWrong))", in: run)
        let updates = setSources.reduce(0) { $0 + watchedPerSource[Int($1)] }
        try expect(books.updates == updates, "watchers had \(books.updates) updates, expected \(updates)", in: run)
        // Last value of each source: the pre-pass sets source s to s + 1,
        // then measured set k writes sources + k + 1.
        var last = (0..<sources).map { $0 + 1 }
        for (k, source) in setSources.enumerated() { last[Int(source)] = sources + k + 1 }
        for atom in 0..<atomCount where watched[atom] {
            let expected = atom < derivedCount
                ? Self.value(below: last[atom / Self.derivedPerSource], levels: atom % Self.depth + 1)
                : last[atom - derivedCount]
            try expect(books.lastSeen[atom] == expected,
                       "watched atom \(atom) last saw \(books.lastSeen[atom]), expected \(expected)", in: run)
        }
    }
}

/// What the engines' computations and watchers record: a plain counter per
/// derived atom, the last value each watched atom's watcher saw, and the
/// updates the watchers had.
///
/// Not synchronized: every engine of `atoms-propagate` runs its
/// computations and deliveries on the thread that sets (the store's
/// propagation and deliveries are synchronous in an uncontended `set`;
/// Combine's `send` and Observation's `willSet` call out in place), and the
/// harness reads the books on that thread after the run. Raw pointers, so
/// that counting costs a store and no reference counting.
struct PropagateBooks {
    /// The books of the run in progress (one run at a time): the atoms and
    /// closures reach them here, so that no atom key carries them.
    nonisolated(unsafe) static var current = empty
    /// The books between runs (never freed).
    nonisolated(unsafe) static let empty = PropagateBooks(derived: 0, atoms: 0)

    let recomputations: UnsafeMutableBufferPointer<UInt32>
    let lastSeen: UnsafeMutableBufferPointer<Int>
    private let updateCount: UnsafeMutablePointer<Int>

    init(derived: Int, atoms: Int) {
        recomputations = .allocate(capacity: derived)
        recomputations.initialize(repeating: 0)
        lastSeen = .allocate(capacity: atoms)
        lastSeen.initialize(repeating: Int.min)
        updateCount = .allocate(capacity: 1)
        updateCount.initialize(to: 0)
    }

    /// Frees the books; call once, after the run's checks.
    func deallocate() {
        recomputations.deallocate()
        lastSeen.deallocate()
        updateCount.deallocate()
    }

    var updates: Int { updateCount.pointee }

    /// Zeroes the counts (after the set-up and the pre-pass).
    func resetCounts() {
        recomputations.update(repeating: 0)
        updateCount.pointee = 0
    }

    @inline(__always)
    static func recomputed(_ atom: Int32) {
        current.recomputations[Int(atom)] &+= 1
    }

    @inline(__always)
    static func delivered(_ atom: Int32, _ value: Int) {
        current.lastSeen[Int(atom)] = value
        current.updateCount.pointee &+= 1
    }
}
