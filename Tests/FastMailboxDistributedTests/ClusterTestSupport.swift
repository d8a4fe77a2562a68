import Distributed
import FastMailbox
import FastMailboxDistributed
import Logging
import MNScheduler

/// A clock the test advances by hand: failure detection becomes deterministic.
final class ManualClock: Sendable {
    private let nanoseconds = Lock<UInt64>(1_000_000_000)
    var now: UInt64 { nanoseconds.withLock { $0 } }
    func advance(by duration: Duration) {
        let step = UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
        nanoseconds.withLock { $0 += step }
    }
}

/// Collects values from any thread (MNScheduler's Lock: TSan can see it).
final class Probe<T: Sendable>: Sendable {
    private let storage = Lock<[T]>([])
    func record(_ value: T) { storage.withLock { $0.append(value) } }
    var values: [T] { storage.withLock { $0 } }
}

let silentLogger = Logger(label: "fastmailbox.distributed.tests") { _ in SwiftLogNoOpLogHandler() }

/// One node of a test cluster on a loopback network, ticked by hand.
struct TestNode {
    let endpoint: Endpoint
    let actors: ActorSystem
    let cluster: ClusterSystem

    static func start(port: Int, peers: [Int], network: LoopbackNetwork, clock: ManualClock,
                      callTimeout: Duration = .seconds(5)) async throws -> TestNode {
        var configuration = SchedulerConfiguration()
        configuration.workers = 2
        let actors = try ActorSystem(name: "node\(port)", configuration: configuration, logger: silentLogger)
        let endpoint = Endpoint(host: "loopback", port: port)
        let settings = ClusterSettings(endpoint: endpoint, peers: peers.map { Endpoint(host: "loopback", port: $0) },
                                       heartbeatInterval: .milliseconds(100), failureTimeout: .seconds(1),
                                       callTimeout: callTimeout, automaticTicks: false, clock: { clock.now })
        let cluster = try await ClusterSystem(settings: settings, actors: actors,
                                              transport: LoopbackTransport(network: network), logger: silentLogger)
        // Time passes between starts: a node that dialled a peer not yet listening dials
        // again once an interval has passed since (so exactly one dial per pair is in flight).
        clock.advance(by: .milliseconds(100))
        return TestNode(endpoint: endpoint, actors: actors, cluster: cluster)
    }

    func stop() async {
        await cluster.shutdown()
        await actors.gracefulShutdown(timeout: .seconds(5))
    }
}

/// Two nodes (1 and 2) on one loopback network, ticked by hand, with a `Counter`
/// registered on node 2 and node 1's proxy for it: the set-up most tests share. The pair
/// holds the Counter (a registration does not keep a distributed actor alive).
final class CounterPair: Sendable {
    let network: LoopbackNetwork
    let clock: ManualClock
    let a: TestNode
    let b: TestNode
    let counter: Counter
    let remote: Counter

    private init(network: LoopbackNetwork, clock: ManualClock, a: TestNode, b: TestNode, counter: Counter, remote: Counter) {
        self.network = network; self.clock = clock; self.a = a; self.b = b; self.counter = counter; self.remote = remote
    }

    /// Node 1 (`a`, calls time out after `callTimeout`) and node 2 (`b`, which registers
    /// `counter` as "counter"), linked; `remote` is a's proxy for it.
    static func start(callTimeout: Duration = .seconds(5)) async throws -> CounterPair {
        let network = LoopbackNetwork()
        let clock = ManualClock()
        let a = try await TestNode.start(port: 1, peers: [2], network: network, clock: clock, callTimeout: callTimeout)
        let b = try await TestNode.start(port: 2, peers: [1], network: network, clock: clock)
        let counter = Counter(actorSystem: b.cluster)
        b.cluster.register(counter, as: "counter")
        let remote = try Counter.resolve(id: try await a.cluster.actorID(named: "counter", on: b.endpoint), using: a.cluster)
        return CounterPair(network: network, clock: clock, a: a, b: b, counter: counter, remote: remote)
    }

    var parts: (LoopbackNetwork, ManualClock, TestNode, TestNode, Counter, Counter) { (network, clock, a, b, counter, remote) }
}

/// A distributed actor for the tests.
distributed actor Counter: ClusterActor {
    var total = 0
    var received: [Int] = []

    distributed func add(_ n: Int) -> Int {
        total += n
        return total
    }

    /// Records `sequence` (per-sender order check).
    distributed func record(_ sequence: Int) {
        received.append(sequence)
    }

    distributed func recorded() -> [Int] { received }

    /// True when the call runs on a worker of the node's scheduler, inside this actor's turn.
    distributed func runsOnScheduler() -> Bool {
        Scheduler.currentWorkerIndex != nil
    }

    distributed func fail() throws -> Int {
        throw CounterError.refused
    }

    distributed func echo<Value: Codable & Sendable>(_ value: Value) -> Value { value }

    /// Forwards to a Sink ref passed by the caller (refs travel as ids).
    distributed func forward(_ value: Int, to sink: ActorRef<SinkMessage>) {
        sink.tell(.item(from: -1, sequence: value))
    }
}

enum CounterError: Error { case refused }

/// Messages of the event actor that other nodes tell.
enum SinkMessage: Codable, Sendable {
    case item(from: Int, sequence: Int)
    case get(replyTo: ActorRef<[Int]>)
}

/// An event actor (not a distributed actor) reachable from other nodes by export.
final class Sink: EventActor {
    var items: [Int] = []
    func receive(_ message: SinkMessage, context: ActorContext<SinkMessage>) {
        switch message {
        case .item(_, let sequence): items.append(sequence)
        case .get(let replyTo): replyTo.tell(items)
        }
    }
}
