// swift-tools-version:6.2
import PackageDescription

// Spindle's fuzz targets, in a package of their own: the main package and its
// users never see libFuzzer's entry points or the sanitizer flags. Built and
// run by scripts/fuzz.sh, which holds the build command and the reason for
// each flag.
let package = Package(
    name: "SpindleFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Spindle", path: "..")],
    targets: [
        // The JSON Lines recording reader (SpinRecording) and replay. Its
        // entry point is libFuzzer's `LLVMFuzzerTestOneInput`, and libFuzzer
        // provides `main`: the sources are a library as far as Swift knows.
        .executableTarget(
            name: "RecordingFuzzer",
            dependencies: [
                .product(name: "Spindle", package: "Spindle"),
                .product(name: "SpindleReplay", package: "Spindle"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
