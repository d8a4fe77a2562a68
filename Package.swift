// swift-tools-version:6.1
import PackageDescription

// Dependencies point one way: CConcurrencyKit <- MNScheduler <- FastMailbox <- ring-bench.
// MallocCounter is test/benchmark support only (it interposes malloc to count allocations).
let package = Package(
    name: "FastMailbox",
    products: [
        .library(name: "FastMailbox", targets: ["FastMailbox"]),
        .library(name: "MNScheduler", targets: ["MNScheduler"]),
        .executable(name: "ring-bench", targets: ["ring-bench"]),
    ],
    dependencies: [
        // ring-bench only (the libraries depend on nothing outside the toolchain).
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CConcurrencyKit",
            path: "Sources/CConcurrencyKit"
            // Debian's libck-dev installs into /usr/include and the default library path,
            // so no pkgConfig: "ck" here: ck.pc's Cflags carry -D__x86_64__, which SwiftPM
            // rejects with a warning on every build. scripts/bootstrap installs libck-dev.
        ),
        .target(name: "MallocCounter", path: "Sources/MallocCounter"),
        .target(name: "MNScheduler", dependencies: ["CConcurrencyKit"]),
        .target(name: "FastMailbox", dependencies: ["MNScheduler"]),
        .executableTarget(
            name: "ring-bench",
            dependencies: [
                "FastMailbox", "MNScheduler", "CConcurrencyKit", "MallocCounter",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // Examples: each runs with `swift run <name>` and prints what it did.
        .executableTarget(name: "example-echo", dependencies: ["FastMailbox"], path: "Examples/EchoAsk"),
        .executableTarget(name: "example-ring", dependencies: ["FastMailbox"], path: "Examples/Ring"),
        .executableTarget(name: "example-login", dependencies: ["FastMailbox"], path: "Examples/Login"),
        .executableTarget(name: "example-image-cache", dependencies: ["FastMailbox"], path: "Examples/ImageCache"),
        .executableTarget(name: "example-readme", dependencies: ["FastMailbox"], path: "Examples/ReadmeExample"),
        .testTarget(name: "MNSchedulerTests", dependencies: ["MNScheduler", "CConcurrencyKit"]),
        .testTarget(name: "FastMailboxTests", dependencies: ["FastMailbox", "MNScheduler", "MallocCounter"]),
    ],
    swiftLanguageModes: [.v6]
)
