// A Hummingbird HTTP server whose requests are handled by actors, with FastMailbox's
// metrics exported for Prometheus, in one ServiceGroup that shuts down gracefully.
//
//   cd Examples/Server && swift run Server            # listens on 127.0.0.1:8080 ($PORT)
//   curl -X POST localhost:8080/counter/5             # tell the counter actor: add 5
//   curl localhost:8080/counter                       # ask it for the total
//   curl localhost:8080/metrics                       # fastmailbox_* in Prometheus' text format
//   kill -TERM <pid>                                  # HTTP stops, then the actors drain
//
// `swift run Server --self-test` does all of that against itself and exits.

#if canImport(Glibc)
import Glibc
#endif
import FastMailbox
import FastMailboxServiceLifecycle
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

enum CounterMessage: Sendable { case add(Int), get(replyTo: ActorRef<Int>) }

final class Counter: EventActor {
    var total = 0
    func receive(_ message: CounterMessage, context: ActorContext<CounterMessage>) {
        switch message {
        case .add(let n): total += n
        case .get(let replyTo): replyTo.tell(total)
        }
    }
}

var logger = Logger(label: "server-example")
logger.logLevel = .info

let prometheus = PrometheusCollectorRegistry()
MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: prometheus))

let system = try ActorSystem(name: "server", logger: logger)
let counter = try system.spawn(options: SpawnOptions(name: "counter")) { Counter() }
let reporter = ActorSystemMetricsReporter(system: system, interval: .seconds(1))

let router = Router()
router.post("counter/:n") { _, context -> String in
    let n = try context.parameters.require("n", as: Int.self)
    counter.tell(.add(n))  // fire-and-forget: returns at once
    return "added \(n)\n"
}
router.get("counter") { _, _ -> String in
    let total = try await counter.ask(timeout: .seconds(1)) { .get(replyTo: $0) }
    return "total \(total)\n"
}
router.get("metrics") { _, _ -> String in
    reporter.report()  // a fresh sample for the scrape (the reporter also samples every second)
    return prometheus.emitToString()
}

let port = getenv("PORT").flatMap { Int(String(cString: $0)) } ?? 8080
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                      logger: logger)
let actors = ActorSystemService(system: system, shutdownTimeout: .seconds(5), metricsReporter: reporter) { report in
    print("actor system: \(report) — balanced: \(report.isBalanced)")
}
// Shut down in reverse order: the HTTP server (last) stops taking requests first, then the
// actors drain what it sent them.
let group = ServiceGroup(configuration: .init(
    services: [.init(service: actors), .init(service: app)],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: logger))

if CommandLine.arguments.contains("--self-test") {
    Task {
        try await Task.sleep(for: .seconds(1))
        for command in ["curl -s -X POST localhost:\(port)/counter/5", "curl -s -X POST localhost:\(port)/counter/37",
                        "curl -s localhost:\(port)/counter",
                        "curl -s localhost:\(port)/metrics | grep '^fastmailbox_'"] {
            print("$ \(command)")
            _ = system_shell(command)
        }
        print("sending SIGTERM to myself")
        kill(getpid(), SIGTERM)
    }
}
try await group.run()

/// Runs a shell command, its output going to ours (self-test only).
func system_shell(_ command: String) -> Int32 {
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
    defer { for arg in argv { free(arg) } }
    guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return status
}
