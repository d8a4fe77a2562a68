// example-metrics: the runtime's figures, live. A pool of workers is fed for two seconds
// (some messages fail, some go to a stopped actor, bursts overflow small mailboxes); every
// 500 ms the figures are printed from the in-code snapshot, `system.metrics`, and published
// through swift-metrics by an ActorSystemMetricsReporter to a small printing backend.
// (Examples/Server exports the same figures to Prometheus over HTTP.)
//
//   swift run example-metrics

import FastMailbox
import CoreMetrics
import Metrics
import Synchronization

/// A swift-metrics backend that keeps the latest value of each counter and gauge.
final class LatestValues: MetricsFactory, Sendable {
    final class Handler: CounterHandler, RecorderHandler, Sendable {
        let value = Atomic<Int64>(0)
        func increment(by amount: Int64) { value.wrappingAdd(amount, ordering: .relaxed) }
        func reset() { value.store(0, ordering: .relaxed) }
        func record(_ value: Int64) { self.value.store(value, ordering: .relaxed) }
        func record(_ value: Double) { self.value.store(Int64(value), ordering: .relaxed) }
    }
    let handlers = Mutex<[String: Handler]>([:])

    private func handler(_ label: String, _ dimensions: [(String, String)]) -> Handler {
        let key = label + dimensions.filter { $0.0 != "system" }.map { "{\($0.0)=\($0.1)}" }.joined()
        return handlers.withLock { table in
            if let existing = table[key] { return existing }
            let fresh = Handler()
            table[key] = fresh
            return fresh
        }
    }
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { handler(label, dimensions) }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        handler(label, dimensions)
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        NOOPMetricsHandler.instance
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { NOOPMetricsHandler.instance }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}

    var lines: [String] {
        handlers.withLock { $0.map { "\($0.key) \($0.value.value.load(ordering: .relaxed))" }.sorted() }
    }
}

struct Flaky: Error, CustomStringConvertible { var description: String { "flaky input" } }

let system = try ActorSystem(name: "metrics-demo", defaultSupervisor: .resume)
let backend = LatestValues()
let reporter = ActorSystemMetricsReporter(system: system, interval: .milliseconds(500), factory: backend)
let reporting = Task { await reporter.run() }

let workers = try system.spawn(options: SpawnOptions(name: "workers", mailboxCapacity: 8, pool: SpawnOptions.Pool(size: 4))) { (n: Int, _) in
    if n % 1_000 == 999 { throw Flaky() }  // resumed by the supervisor, counted nowhere else
}
let gone = try system.spawn(options: SpawnOptions(name: "gone")) { (_: Int, _) in }
gone.stop()

let clock = ContinuousClock()
let end = clock.now + .seconds(2)
var n = 0
var nextPrint = clock.now
while clock.now < end {
    for _ in 0..<5_000 { workers.tell(n); n += 1 }
    if n % 50_000 == 0 { gone.tell(n) }
    if clock.now >= nextPrint {
        print("metrics: \(system.metrics)")
        nextPrint = clock.now + .milliseconds(500)
    }
    try await Task.sleep(for: .milliseconds(5))
}
let report = await system.gracefulShutdown()
reporting.cancel()
await reporting.value
print("after shutdown: \(system.metrics)")
print("published to swift-metrics:")
for line in backend.lines { print("  \(line)") }
print("shutdown: \(report) — balanced: \(report.isBalanced)")
