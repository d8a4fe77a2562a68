// example-service: an ActorSystem inside a swift-service-lifecycle ServiceGroup, beside a
// producer service that feeds it (standing in for an HTTP server). On SIGTERM (or SIGINT)
// the group shuts down in reverse order: the producer stops first, then ActorSystemService
// drains the actors and prints the report — every message sent is accounted for.
//
//   swift run --traits ServiceLifecycleSupport example-service                    # until Ctrl-C
//   swift run --traits ServiceLifecycleSupport example-service --sigterm-after 2  # SIGTERM after 2 s
//   (or from another shell: kill -TERM <pid>)

#if ServiceLifecycleSupport
#if canImport(Glibc)
import Glibc
#endif
import FastMailbox
import FastMailboxServiceLifecycle
import Logging
import ServiceLifecycle
import Synchronization

var logger = Logger(label: "example-service")
logger.logLevel = .info

let system = try ActorSystem(name: "service-demo", logger: logger)
let processed = Atomic<Int>(0)
let sentCount = Atomic<Int>(0)
let sum = try system.spawn(options: SpawnOptions(name: "summers", pool: SpawnOptions.Pool(size: 4))) { (n: Int, _) in
    processed.wrappingAdd(1, ordering: .relaxed)
    _ = n
}

/// Sends to the pool until graceful shutdown begins (a stand-in for request handlers).
struct Producer: Service {
    let target: ActorRef<Int>
    func run() async throws {
        var n = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            for _ in 0..<1_000 { target.tell(n); n += 1 }
            sentCount.wrappingAdd(1_000, ordering: .relaxed)
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

let producer = Producer(target: sum)
let actors = ActorSystemService(system: system, shutdownTimeout: .seconds(5)) { report in
    print("actor system: \(report) — balanced: \(report.isBalanced)")
}
// Reverse order on shutdown: the producer (listed last) stops first, then the actors drain.
let group = ServiceGroup(configuration: .init(
    services: [.init(service: actors), .init(service: producer)],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: logger))

let arguments = CommandLine.arguments
if let flag = arguments.firstIndex(of: "--sigterm-after"), flag + 1 < arguments.count,
   let seconds = Int(arguments[flag + 1]) {
    Task {
        try await Task.sleep(for: .seconds(seconds))
        print("sending SIGTERM to myself (pid \(getpid()))")
        kill(getpid(), SIGTERM)
    }
} else {
    print("running as pid \(getpid()); stop with Ctrl-C or kill -TERM \(getpid())")
}
try await group.run()
print("producer sent \(sentCount.load(ordering: .relaxed)), actors processed \(processed.load(ordering: .relaxed))")
#else
print("example-service needs the ServiceLifecycleSupport trait: swift run --traits ServiceLifecycleSupport example-service")
#endif
