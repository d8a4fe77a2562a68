// swift-tools-version:6.1
import PackageDescription

// The gRPC transport of FastMailboxDistributed, in a package of its own so that building
// or testing the core (the root package) never compiles SwiftNIO or gRPC. Dependencies
// point one way: this package -> the root package (FastMailbox, FastMailboxDistributed).
let package = Package(
    name: "FastMailboxGRPC",
    products: [
        .library(name: "FastMailboxGRPC", targets: ["FastMailboxGRPC"]),
        .executable(name: "example-cluster", targets: ["example-cluster"]),
    ],
    dependencies: [
        .package(name: "FastMailbox", path: ".."),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "FastMailboxGRPC",
            dependencies: [
                .product(name: "FastMailboxDistributed", package: "FastMailbox"),
                .product(name: "FastMailbox", package: "FastMailbox"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "example-cluster",
            dependencies: [
                "FastMailboxGRPC",
                .product(name: "FastMailboxDistributed", package: "FastMailbox"),
                .product(name: "FastMailbox", package: "FastMailbox"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "FastMailboxGRPCTests",
            dependencies: [
                "FastMailboxGRPC",
                .product(name: "FastMailboxDistributed", package: "FastMailbox"),
                .product(name: "FastMailbox", package: "FastMailbox"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCInProcessTransport", package: "grpc-swift-2"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
