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
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The C target: liburcu wrappers, the bounded ring, the parker. liburcu
        // is linked dynamically (no _LGPL_SOURCE): see README, "Licence".
        .target(
            name: "CSpindle",
            path: "CSupport",
            linkerSettings: [.linkedLibrary("urcu-common")]
        ),
        .target(
            name: "Spindle",
            dependencies: [
                "CSpindle",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "benchmarks",
            dependencies: ["Spindle"],
            path: "Benchmarks"
        ),
        .testTarget(name: "SpindleTests", dependencies: ["Spindle"]),
        .testTarget(name: "CSpindleTests", dependencies: ["CSpindle"]),
    ],
    swiftLanguageModes: [.v6]
)
