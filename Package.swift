// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Spindle",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Spindle", targets: ["Spindle"]),
        .executable(name: "benchmarks", targets: ["benchmarks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Benchmark harness only: command line, latency histograms.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // The C target: liburcu wrappers, the bounded ring, the parker. liburcu
        // is linked dynamically (no _LGPL_SOURCE): see README, "Licence".
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
            ]
        ),
        // Benchmark harness only: counts malloc calls by interposing glibc's
        // allocator (reports "unsupported" elsewhere). Never linked into Spindle.
        .target(
            name: "CMallocCounter",
            path: "Benchmarks/CMallocCounter"
        ),
        .executableTarget(
            name: "benchmarks",
            dependencies: [
                "Spindle",
                "CMallocCounter",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Benchmarks/Harness"
        ),
        // The runnable example: `swift run spindle-example`.
        .executableTarget(name: "spindle-example", dependencies: ["Spindle"], path: "Examples/SpindleExample"),
        .testTarget(name: "SpindleTests", dependencies: ["Spindle"]),
        .testTarget(name: "CSpindleTests", dependencies: ["CSpindle"]),
        // The concurrency stress suite (issue 4): run under Thread Sanitizer
        // by scripts/stress.sh; public API only, so it also runs in release.
        .testTarget(name: "SpindleStressTests", dependencies: ["Spindle", "CSpindle"]),
    ],
    swiftLanguageModes: [.v6]
)
