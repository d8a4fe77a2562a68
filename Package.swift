// swift-tools-version:6.1
import PackageDescription

// Dependencies point one way: CConcurrencyKit <- MNScheduler <- FastMailbox <- ring-bench.
// MallocCounter is test/benchmark support only (it interposes malloc to count allocations).
// Outside dependencies stay light: the core takes swift-log and swift-metrics (API
// packages, no transitive dependencies). FastMailboxServiceLifecycle needs
// swift-service-lifecycle (with swift-async-algorithms and swift-collections: a long
// debug build), so it is behind the package trait "ServiceLifecycleSupport": without it the
// product is an empty module and nothing of swift-service-lifecycle is built. Enable it with
// `.package(url: ..., from: ..., traits: ["ServiceLifecycleSupport"])`, or
// `swift build --traits ServiceLifecycleSupport` here. swift-docc-plugin is a command
// plugin, built only by `swift package generate-documentation`.
#if os(Linux)
let concurrencyKitPkgConfig = Context.environment["FASTMAILBOX_CK_PKGCONFIG"]
#else
let concurrencyKitPkgConfig: String? = Context.environment["FASTMAILBOX_CK_PKGCONFIG"] ?? "ck"
#endif

let package = Package(
    name: "FastMailbox",
    products: [
        .library(name: "FastMailbox", targets: ["FastMailbox"]),
        .library(name: "MNScheduler", targets: ["MNScheduler"]),
        .library(name: "FastMailboxTestKit", targets: ["FastMailboxTestKit"]),
        .library(name: "FastMailboxServiceLifecycle", targets: ["FastMailboxServiceLifecycle"]),
        .library(name: "FastMailboxDistributed", targets: ["FastMailboxDistributed"]),
        .executable(name: "ring-bench", targets: ["ring-bench"]),
    ],
    traits: [
        .trait(name: "ServiceLifecycleSupport",
               description: "Builds FastMailboxServiceLifecycle (ActorSystemService) with swift-service-lifecycle"),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        // ring-bench only.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // Linux packages (Debian's libck-dev, Fedora's ck-devel) install into the default
        // include and library paths, so Linux uses no pkg-config by default: Debian's
        // ck.pc's Cflags carry -D__x86_64__, which SwiftPM rejects with a warning on every
        // build. Elsewhere (Homebrew's concurrencykit under /opt/homebrew) pkg-config finds
        // it. FASTMAILBOX_CK_PKGCONFIG=<name of a .pc> asks pkg-config on any system (with
        // PKG_CONFIG_PATH for a Concurrency Kit installed elsewhere; README, "Platforms").
        .systemLibrary(
            name: "CConcurrencyKit",
            path: "Sources/CConcurrencyKit",
            pkgConfig: concurrencyKitPkgConfig,
            providers: [.apt(["libck-dev"]), .yum(["ck-devel"]), .brew(["concurrencykit"])]
        ),
        .target(name: "MallocCounter", path: "Sources/MallocCounter"),
        .target(name: "MNScheduler", dependencies: ["CConcurrencyKit"]),
        .target(
            name: "FastMailbox",
            dependencies: [
                "MNScheduler",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // For users' tests (like swift-nio's NIOEmbedded): the DeterministicScheduler (seeded
        // turns, virtual time) and TestProbe. Nothing in the core depends on it.
        .target(
            name: "FastMailboxTestKit",
            dependencies: ["FastMailbox", "MNScheduler", .product(name: "Logging", package: "swift-log")]
        ),
        // Distributed actors across nodes: the DistributedActorSystem, identity,
        // frames, the Transport protocol, remote ActorRefs, failure detection. Depends on the
        // toolchain's Distributed module only; the gRPC transport is the nested package
        // Distributed/ (FastMailboxGRPC), so building the core never compiles NIO or gRPC.
        .target(
            name: "FastMailboxDistributed",
            dependencies: [
                "FastMailbox", "MNScheduler",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "FastMailboxServiceLifecycle",
            dependencies: [
                "FastMailbox", "FastMailboxDistributed",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle",
                         condition: .when(traits: ["ServiceLifecycleSupport"])),
            ]
        ),
        .executableTarget(
            name: "ring-bench",
            dependencies: [
                "FastMailbox", "MNScheduler", "CConcurrencyKit", "MallocCounter",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // scripts/instructions.sh: fixed workloads counted with callgrind.
        .executableTarget(name: "instruction-probe", dependencies: ["FastMailbox", "MNScheduler"]),
        // Examples: each runs with `swift run <name>` and prints what it did.
        .executableTarget(name: "example-echo", dependencies: ["FastMailbox"], path: "Examples/EchoAsk"),
        .executableTarget(name: "example-ring", dependencies: ["FastMailbox"], path: "Examples/Ring"),
        .executableTarget(name: "example-login", dependencies: ["FastMailbox"], path: "Examples/Login"),
        .executableTarget(name: "example-image-cache", dependencies: ["FastMailbox", "MNScheduler"], path: "Examples/ImageCache"),
        .executableTarget(name: "example-readme", dependencies: ["FastMailbox"], path: "Examples/ReadmeExample"),
        .executableTarget(name: "example-metrics", dependencies: ["FastMailbox"], path: "Examples/Metrics"),
        .executableTarget(
            name: "example-service",
            dependencies: ["FastMailbox", "FastMailboxServiceLifecycle",
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle",
                                    condition: .when(traits: ["ServiceLifecycleSupport"])),
                           .product(name: "Logging", package: "swift-log")],
            path: "Examples/Service"
        ),
        // Helpers the test targets share: threads, process limits, scheduler units
        // (TestSupport); systems, probes and gates for actor tests (FastMailboxTestSupport).
        // The DocC tutorial's package (FastMailbox.docc/Tutorial.md), built and tested as written.
        .target(name: "Heartbeat", dependencies: ["FastMailbox"], path: "Examples/Tutorial/Heartbeat"),
        .testTarget(name: "HeartbeatTests", dependencies: ["Heartbeat", "FastMailbox", "FastMailboxTestKit"],
                    path: "Examples/Tutorial/HeartbeatTests"),
        .target(name: "TestSupport", dependencies: ["MNScheduler", "CConcurrencyKit"], path: "Tests/TestSupport"),
        .target(
            name: "FastMailboxTestSupport",
            dependencies: ["FastMailbox", "MNScheduler", "FastMailboxTestKit", .product(name: "Logging", package: "swift-log")],
            path: "Tests/FastMailboxTestSupport"
        ),
        // Unit tests: safe to run in parallel (scripts/test.sh runs them first).
        // MNSchedulerTests drive units with the DeterministicScheduler, which lives in the TestKit.
        .testTarget(name: "MNSchedulerTests",
                    dependencies: ["MNScheduler", "CConcurrencyKit", "TestSupport", "FastMailboxTestKit"]),
        .testTarget(name: "FastMailboxTestKitTests",
                    dependencies: ["FastMailboxTestKit", "FastMailbox", "MNScheduler", "TestSupport"]),
        .testTarget(
            name: "FastMailboxTests",
            dependencies: ["FastMailbox", "MNScheduler", "FastMailboxTestKit", "MallocCounter", "TestSupport",
                           "FastMailboxTestSupport",
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "Metrics", package: "swift-metrics")]
        ),
        .testTarget(
            name: "FastMailboxDistributedTests",
            dependencies: ["FastMailboxDistributed", "FastMailbox", "MNScheduler",
                           .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "FastMailboxServiceLifecycleTests",
            dependencies: ["FastMailboxServiceLifecycle", "FastMailboxDistributed",
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle",
                                    condition: .when(traits: ["ServiceLifecycleSupport"])),
                           .product(name: "Logging", package: "swift-log")]
        ),
        // Stress, soak and fault-injection tests: they load both cores on purpose or
        // measure the whole process, so they run alone, one at a time (--no-parallel).
        .testTarget(name: "MNSchedulerStressTests", dependencies: ["MNScheduler", "CConcurrencyKit", "TestSupport"]),
        .testTarget(
            name: "FastMailboxStressTests",
            dependencies: ["FastMailbox", "MNScheduler", "FastMailboxTestKit", "MallocCounter", "TestSupport",
                           "FastMailboxTestSupport",
                           .product(name: "Logging", package: "swift-log")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
