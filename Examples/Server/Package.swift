// swift-tools-version:6.1
// A package of its own, so FastMailbox's `swift build` / `swift test` (and CI) never build
// SwiftNIO, Hummingbird or swift-prometheus (a first debug build of this package takes
// several minutes). Run it with `swift run` in this directory.
import PackageDescription

let package = Package(
    name: "FastMailboxServerExample",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "FastMailbox", path: "../..", traits: ["ServiceLifecycleSupport"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "Server",
            dependencies: [
                .product(name: "FastMailbox", package: "FastMailbox"),
                .product(name: "FastMailboxServiceLifecycle", package: "FastMailbox"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
