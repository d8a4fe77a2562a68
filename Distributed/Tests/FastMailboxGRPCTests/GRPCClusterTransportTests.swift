import Distributed
import FastMailbox
import FastMailboxDistributed
import FastMailboxGRPC
import GRPCCore
import GRPCInProcessTransport
import Logging
import Testing

distributed actor Adder: ClusterActor {
    var total = 0
    distributed func add(_ n: Int) -> Int {
        total += n
        return total
    }
}

enum Note: Codable, Sendable {
    case item(Int)
    case get(replyTo: ActorRef<[Int]>)
}

final class Notebook: EventActor {
    var items: [Int] = []
    func receive(_ message: Note, context: ActorContext<Note>) {
        switch message {
        case .item(let n): items.append(n)
        case .get(let replyTo): replyTo.tell(items)
        }
    }
}

let silent = Logger(label: "grpc.tests") { _ in SwiftLogNoOpLogHandler() }

@Suite("Distributed over gRPC (in-process transport)", .serialized) struct GRPCClusterTransportTests {
    @Test("calls, ordered tells and an ask between two nodes over gRPC streams")
    func twoNodes() async throws {
        let transports = [1: InProcessTransport(), 2: InProcessTransport()]
        func node(_ port: Int, peers: [Int]) async throws -> (ActorSystem, ClusterSystem) {
            let actors = try ActorSystem(name: "node\(port)", logger: silent)
            let settings = ClusterSettings(endpoint: Endpoint(host: "inprocess", port: port),
                                           peers: peers.map { Endpoint(host: "inprocess", port: $0) },
                                           automaticTicks: true)
            let transport = GRPCClusterTransport(makeServer: { transports[$0.port]!.server },
                                                 makeClient: { transports[$0.port]!.client }, logger: silent)
            return (actors, try await ClusterSystem(settings: settings, actors: actors, transport: transport, logger: silent))
        }
        let (actorsB, b) = try await node(2, peers: [1])
        let (actorsA, a) = try await node(1, peers: [2])
        let adder = Adder(actorSystem: b)
        b.register(adder, as: "adder")
        b.export(try actorsB.spawn(options: SpawnOptions(name: "notebook")) { Notebook() }, as: "notebook")

        let endpointB = Endpoint(host: "inprocess", port: 2)
        let remote = try Adder.resolve(id: try await a.actorID(named: "adder", on: endpointB), using: a)
        var total = 0
        for n in 1...200 { total = try await remote.add(n) }
        #expect(total == 20_100)

        let notebook: ActorRef<Note> = try await a.remoteRef(named: "notebook", on: endpointB)
        for n in 0..<500 { notebook.tell(.item(n)) }
        #expect(try await notebook.ask { .get(replyTo: $0) } == Array(0..<500))
        _ = try await remote.add(0)  // its reply acknowledges the tells
        let stats = a.statistics(for: endpointB)
        #expect(stats.tellsSent == 501 && stats.tellsAcknowledged == 501 && stats.isBalanced, "\(stats)")  // 500 + the ask
        #expect(stats.callsSucceeded == 201 && stats.bytesSent > 0 && stats.bytesReceived > 0)

        await a.shutdown()
        await b.shutdown()
        await actorsA.gracefulShutdown()
        await actorsB.gracefulShutdown()
    }
}
