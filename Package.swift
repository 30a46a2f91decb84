// swift-tools-version:6.2
import PackageDescription

/// OpenCombine on the platforms that have no Combine of their own.
let openCombine: Target.Dependency = .product(
    name: "OpenCombine",
    package: "OpenCombine",
    condition: .when(platforms: [.linux, .windows, .android, .wasi, .openbsd], traits: ["SpindleCombine"])
)

/// A product of another package, used only when `trait` is enabled.
///
/// Every use of a package other than swift-atomics and swift-log is behind
/// one of the traits below, so that a dependent that turns them off
/// (`.package(url: …, traits: [])`) resolves, fetches and builds those two
/// alone for the `Spindle` product (scripts/dependents.sh checks it): the
/// package manager leaves a dependency out only when every use of it is
/// behind a trait that is off. All are on by default, so this package and
/// a dependent that names no traits build everything, as before.
func product(_ name: String, _ package: String, trait: String) -> Target.Dependency {
    .product(name: name, package: package, condition: .when(traits: [trait]))
}

let package = Package(
    name: "Spindle",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Spindle", targets: ["Spindle"]),
        .library(name: "SpindleCombine", targets: ["SpindleCombine"]),
        .library(name: "SpindleTesting", targets: ["SpindleTesting"]),
        .library(name: "SpindleMetrics", targets: ["SpindleMetrics"]),
        .library(name: "SpindleReplay", targets: ["SpindleReplay"]),
        .library(name: "SpindleNIO", targets: ["SpindleNIO"]),
        .library(name: "SpindleAtoms", targets: ["SpindleAtoms"]),
        .executable(name: "benchmarks", targets: ["benchmarks"]),
    ],
    traits: [
        .trait(name: "SpindleNIO", description: "The SpindleNIO product (and the example server): swift-nio."),
        .trait(name: "SpindleMetrics", description: "The SpindleMetrics product: swift-metrics."),
        .trait(name: "SpindleCombine", description: "The SpindleCombine product on Linux and other systems without Combine: OpenCombine."),
        .trait(name: "Benchmarks", description: "The benchmark harness and the soak: swift-argument-parser, HdrHistogram."),
        .default(enabledTraits: ["SpindleNIO", "SpindleMetrics", "SpindleCombine", "Benchmarks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // SpindleMetrics only: the loop's counters, gauge and timer.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // SpindleCombine only, where Apple's Combine is missing (Linux, Windows…).
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        // SpindleNIO only (and its tests and example server).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Benchmark harness only: command line, latency histograms.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // Documentation only: `swift package generate-documentation --target <product>`
        // (a command plugin; no target depends on it, so builds never run it).
        // The examples the articles show are the snippets in Snippets/, which
        // `swift build` builds and scripts/docs.sh runs.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The C target: liburcu wrappers, the bounded ring, the parker. liburcu
        // is linked dynamically (no _LGPL_SOURCE): see CONTRIBUTING.md, "Licence".
        .target(
            name: "CSpindle",
            path: "CSupport",
            linkerSettings: [.linkedLibrary("urcu-common"), .linkedLibrary("urcu-bp")]
        ),
        .target(
            name: "Spindle",
            dependencies: [
                "CSpindle",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The scheduling protocol's Promela model and its notes
            // (checked by scripts/model-check.sh), beside the code.
            exclude: ["Runtime/Scheduling/Model"]
        ),
        // Benchmark harness and soak only: counts malloc calls by interposing
        // glibc's allocator (reports "unsupported" elsewhere) and reads the
        // heap in use. Never linked into Spindle.
        .target(
            name: "CMallocCounter",
            path: "Benchmarks/CMallocCounter"
        ),
        // Benchmark harness only: the SPSC-ring probe that measures the
        // machine's limit for moving events between two threads.
        .target(
            name: "CSPSCProbe",
            path: "Benchmarks/CSPSCProbe"
        ),
        .executableTarget(
            name: "benchmarks",
            dependencies: [
                "Spindle",
                "CSpindle",  // the queue-ceiling probe drives the C queue directly
                "CMallocCounter",
                "CSPSCProbe",
                product("ArgumentParser", "swift-argument-parser", trait: "Benchmarks"),
                product("Histogram", "hdrhistogram-swift", trait: "Benchmarks"),
                // The http-handler scenario: the example server's handlers
                // in NIO's testing channels.
                "HTTPExample",
                product("NIOCore", "swift-nio", trait: "SpindleNIO"),
                product("NIOEmbedded", "swift-nio", trait: "SpindleNIO"),
                product("NIOHTTP1", "swift-nio", trait: "SpindleNIO"),
                // The atoms scenarios (issue 50): the store, and its
                // yardsticks OpenCombine (Linux; Combine elsewhere) and
                // Observation (the toolchain's own: no package).
                "SpindleAtoms",
                openCombine,
            ],
            path: "Benchmarks/Harness"
        ),
        // The soak: a mixed workload for a given time, then its books, RSS and
        // live objects (`scripts/soak.sh`, run by CI for 60 s).
        .executableTarget(
            name: "soak",
            dependencies: ["Spindle", "CMallocCounter", product("ArgumentParser", "swift-argument-parser", trait: "Benchmarks")],
            path: "Benchmarks/Soak"
        ),
        // `scripts/footprint.sh`'s driver: the example server's handlers on
        // NIO's testing channels, synchronously, for callgrind.
        .executableTarget(
            name: "http-footprint",
            dependencies: [
                "HTTPExample",
                product("NIOCore", "swift-nio", trait: "SpindleNIO"),
                product("NIOEmbedded", "swift-nio", trait: "SpindleNIO"),
                product("NIOHTTP1", "swift-nio", trait: "SpindleNIO"),
            ],
            path: "Benchmarks/HTTPFootprint"
        ),
        // `scripts/atoms-footprint.sh`'s driver: `atoms-propagate`'s graph on
        // a store, synchronously, for callgrind.
        .executableTarget(
            name: "atoms-footprint",
            dependencies: ["SpindleAtoms"],
            path: "Benchmarks/AtomsFootprint"
        ),
        // `scripts/wake-footprint.sh`'s driver: sporadic round trips with
        // the caches evicted between them, for callgrind.
        .executableTarget(
            name: "wake-footprint",
            dependencies: ["Spindle"],
            path: "Benchmarks/WakeFootprint"
        ),
        // The HTTP server `scripts/load.sh` loads (plain NIO, SpindleNIO, the pool).
        .executableTarget(
            name: "spindle-http-server",
            dependencies: [
                "HTTPExample",
                product("NIOCore", "swift-nio", trait: "SpindleNIO"),
                product("NIOPosix", "swift-nio", trait: "SpindleNIO"),
                product("NIOHTTP1", "swift-nio", trait: "SpindleNIO"),
            ],
            path: "Examples/HTTPServer"
        ),
        // Its connection handlers, one per mode, shared with the benchmark
        // harness's `http-handler` scenario.
        .target(
            name: "HTTPExample",
            dependencies: [
                "Spindle", "SpindleNIO",
                product("NIOCore", "swift-nio", trait: "SpindleNIO"),
                product("NIOHTTP1", "swift-nio", trait: "SpindleNIO"),
            ],
            path: "Examples/HTTPExample"
        ),
        // The runnable example: `swift run spindle-example`.
        .executableTarget(name: "spindle-example", dependencies: ["Spindle"], path: "Examples/SpindleExample"),
        // The atoms example, a todo list on the command line: `swift run spindle-atoms-todo`.
        .executableTarget(name: "spindle-atoms-todo", dependencies: ["Spindle", "SpindleAtoms"], path: "Examples/AtomsTodo"),
        // The Combine bridge: Apple's Combine where it exists, OpenCombine
        // elsewhere (the sources choose with `#if canImport(Combine)`).
        .target(
            name: "SpindleCombine",
            dependencies: ["Spindle", "SpindleAtoms", openCombine]
        ),
        // Helpers for users' tests: reducer specs, feedback specs, the
        // deterministic runner and its virtual clock. Spindle only.
        .target(name: "SpindleTesting", dependencies: ["Spindle"]),
        // swift-metrics for a loop (a SpinObserver), kept out of the core.
        .target(
            name: "SpindleMetrics",
            dependencies: ["Spindle", product("CoreMetrics", "swift-metrics", trait: "SpindleMetrics")]
        ),
        // A loop per NIO channel, on the channel's event loop. Its code needs
        // NIOCore only; NIOPosix is listed so that its DocC snippet (a real
        // server on loopback, built and run by scripts/docs.sh) can import it:
        // a snippet sees the modules of the package's library targets only.
        .target(
            name: "SpindleNIO",
            dependencies: [
                "Spindle",
                product("NIOCore", "swift-nio", trait: "SpindleNIO"),
                product("NIOPosix", "swift-nio", trait: "SpindleNIO"),
            ]
        ),
        // Atoms: keyed, derived and async state as a graph fed by loops.
        // Spindle only (and what Spindle itself uses: its C target, atomics,
        // logging).
        .target(
            name: "SpindleAtoms",
            dependencies: [
                "Spindle",
                "CSpindle",  // prefetch hints for the propagation
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Record a loop's reductions as JSON Lines and replay them (Foundation).
        .target(name: "SpindleReplay", dependencies: ["Spindle"]),
        // Helpers shared by the test targets: locks, recorders, waiting,
        // threads. Not a product.
        .target(name: "SpindleTestSupport", path: "Tests/SpindleTestSupport"),
        // The test matrices' third queue kind, a custom queue (SPI).
        .target(name: "SpindleQueueFixture", dependencies: ["Spindle"], path: "Tests/SpindleQueueFixture"),
        // The levels example's types (Getting started) for the test targets
        // that use them as a fixture.
        .target(name: "SpindleLevelsFixture", path: "Tests/SpindleLevelsFixture"),
        .testTarget(name: "SpindleTests", dependencies: ["Spindle", "SpindleTestSupport", "SpindleQueueFixture"]),
        .testTarget(
            name: "SpindleTestingTests",
            dependencies: ["SpindleTesting", "Spindle", "SpindleTestSupport", "SpindleLevelsFixture"]
        ),
        // The recorder's crash tests run it as a child process and kill it
        // (SpindleObservabilityTests finds it beside the test bundle).
        .executableTarget(
            name: "spindle-recorder-child",
            dependencies: ["Spindle", "SpindleReplay", "RecorderCrashFixture"],
            path: "Tests/RecorderCrashChild"
        ),
        // The state and reducer the child records and the tests check.
        .target(name: "RecorderCrashFixture", dependencies: ["Spindle"], path: "Tests/RecorderCrashFixture"),
        .testTarget(
            name: "SpindleObservabilityTests",
            dependencies: [
                "Spindle", "SpindleReplay", "SpindleTestSupport", "SpindleQueueFixture",
                .target(name: "SpindleMetrics", condition: .when(traits: ["SpindleMetrics"])),
                "spindle-recorder-child", "RecorderCrashFixture",
                .product(name: "Logging", package: "swift-log"),
                product("MetricsTestKit", "swift-metrics", trait: "SpindleMetrics"),
            ]
        ),
        .testTarget(
            name: "SpindleCombineTests",
            dependencies: [
                .target(name: "SpindleCombine", condition: .when(traits: ["SpindleCombine"])),
                "Spindle", "SpindleAtoms", "SpindleTestSupport", openCombine,
            ]
        ),
        .testTarget(
            name: "SpindleNIOTests",
            dependencies: [
                .target(name: "SpindleNIO", condition: .when(traits: ["SpindleNIO"])),
                "Spindle", "SpindleTestSupport",
                product("NIOCore", "swift-nio", trait: "SpindleNIO"),
                product("NIOPosix", "swift-nio", trait: "SpindleNIO"),
                product("NIOEmbedded", "swift-nio", trait: "SpindleNIO"),
            ]
        ),
        .testTarget(name: "CSpindleTests", dependencies: ["CSpindle", "SpindleTestSupport"]),
        .testTarget(name: "SpindleAtomsTests", dependencies: ["SpindleAtoms", "Spindle", "SpindleTestSupport"]),
        // The concurrency stress suite (issue 4): run under Thread Sanitizer
        // by scripts/stress.sh; public API only, so it also runs in release.
        .testTarget(
            name: "SpindleStressTests",
            dependencies: ["Spindle", "CSpindle", "SpindleTesting", "SpindleAtoms", "SpindleTestSupport", "SpindleQueueFixture"]),
    ],
    swiftLanguageModes: [.v6]
)
