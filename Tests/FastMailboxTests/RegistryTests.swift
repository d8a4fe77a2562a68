// Lookup by name, singletons by key (including a race from many threads) and the typed
// service registry.

import Testing
import Foundation
import Synchronization
@testable import FastMailbox
import FastMailboxTestSupport
import TestSupport
import FastMailboxTestKit

/// Counts its instances, so a test can prove a singleton was made once.
private final class CountedActor: EventActor {
    typealias Message = Int
    init(_ counter: MadeCounter) { counter.made.wrappingAdd(1, ordering: .relaxed) }
    func receive(_ message: Int, context: ActorContext<Int>) throws {}
}

private final class MadeCounter: Sendable {
    let made = Atomic<Int>(0)
    var count: Int { made.load(ordering: .relaxed) }
}

@Suite("Registry", .serialized) struct RegistryTests {
    // MARK: lookup by name

    @Test("lookup finds a live actor by its name and message type, and nothing else")
    func lookupByName() throws {
        let system = try makeSystem()
        let alice = try system.spawn(options: SpawnOptions(name: "alice")) { (_: Int, _) in }
        #expect(system.lookup("alice", as: Int.self) == alice)
        #expect(system.lookup("alice", as: String.self) == nil)
        #expect(system.lookup("bob", as: Int.self) == nil)
        let found: ActorRef<Int>? = system.lookup("alice")
        #expect(found?.name == "alice")
        system.shutdown()
    }

    @Test("lookup finds a named sequential actor too")
    func lookupSequential() async throws {
        let system = try makeSystem()
        let looper = try system.spawn(options: SpawnOptions(name: "seq")) { (inbox: Inbox<ActorRef<Int>>) in
            for await replyTo in inbox { replyTo.tell(7) }
        }
        let found = try #require(system.lookup("seq", as: ActorRef<Int>.self))
        #expect(found == looper)
        let reply: Int = try await found.ask { $0 }
        #expect(reply == 7)
        #expect(system.lookup("seq", as: Int.self) == nil, "wrong message type")
        system.shutdown()
    }

    @Test("lookup forgets a stopped actor, and its name can then be used again")
    func lookupAfterStop() throws {
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic)
        let first = try system.spawn(options: SpawnOptions(name: "reused")) { (_: Int, _) in }
        #expect(throws: ActorSystemError.duplicateName("reused")) {
            try system.spawn(options: SpawnOptions(name: "reused")) { (_: Int, _) in }
        }
        first.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.lookup("reused", as: Int.self) == nil)
        let second = try system.spawn(options: SpawnOptions(name: "reused")) { (_: Int, _) in }
        #expect(system.lookup("reused", as: Int.self) == second)
        #expect(second != first)
        system.shutdown()
    }

    // MARK: singletons

    @Test("a singleton is created on first use and the same ref is returned afterwards")
    func singletonOnce() throws {
        let system = try makeSystem()
        let counter = MadeCounter()
        #expect(system.metrics.liveActors == 0)
        let first = try system.singleton(key: "clock") { try system.spawn { CountedActor(counter) } }
        let second = try system.singleton(key: "clock") { try system.spawn { CountedActor(counter) } }
        #expect(first == second)
        #expect(counter.count == 1)
        let other = try system.singleton(key: "other") { try system.spawn { CountedActor(counter) } }
        #expect(other != first)
        #expect(system.metrics.liveActors == 2)
        system.shutdown()
    }

    @Test("ActorID's table hash is a bijection of the id (no two ids of a run collide) and works as a Dictionary key")
    func actorIDHash() {
        let ids = (1...10_000).map { ActorID(rawValue: UInt64($0)) }
        #expect(Set(ids.map { $0._rawHashValue(seed: 0) }).count == ids.count)
        #expect(Set(ids.map { $0._rawHashValue(seed: 12_345) }).count == ids.count)
        var table: [ActorID: Int] = [:]
        for (index, id) in ids.enumerated() { table[id] = index }
        #expect(table.count == ids.count && ids.enumerated().allSatisfy { table[$1] == $0 })
        for id in ids where id.rawValue % 2 == 0 { table[id] = nil }
        #expect(table.count == ids.count / 2 && table[ActorID(rawValue: 3)] == 2)
    }

    @Test("a singleton key asked for with another message type is a clear error, not a trap")
    func singletonTypeMismatch() throws {
        let system = try makeSystem()
        let counter = MadeCounter()
        let ints = try system.singleton(key: "shared") { try system.spawn { CountedActor(counter) } }
        #expect(throws: ActorSystemError.singletonTypeMismatch(key: "shared", existing: "\(type(of: ints))",
                                                               requested: "ActorRef<String>")) {
            try system.singleton(key: "shared") { () throws(ActorSystemError) -> ActorRef<String> in
                try system.spawn { (_: String, _) in }
            }
        }
        #expect(try system.singleton(key: "shared") { try system.spawn { CountedActor(counter) } } == ints, "the key still holds its actor")
        #expect(counter.count == 1)
        system.shutdown()
    }

    @Test("many threads racing for one singleton all get the same, single actor")
    func singletonRace() throws {
        let system = try makeSystem()
        let counter = MadeCounter()
        let ids = Probe<ActorID>()
        let rounds = underThreadSanitizer ? 5 : 20
        for round in 0..<rounds {
            runOnThreads(16) { _ in
                if let ref = try? system.singleton(key: "race-\(round)", create: { try system.spawn { CountedActor(counter) } }) {
                    ids.record(ref.id)
                }
            }
        }
        #expect(ids.count == 16 * rounds)
        #expect(Set(ids.values).count == rounds)
        #expect(counter.count == rounds)
        #expect(system.metrics.liveActors == rounds)
        system.shutdown()
    }

    @Test("a singleton that has stopped is recreated by the next call")
    func singletonRecreated() throws {
        let deterministic = DeterministicScheduler(seed: 2)
        let system = makeDeterministicSystem(deterministic)
        let counter = MadeCounter()
        let first = try system.singleton(key: "phoenix") { try system.spawn { CountedActor(counter) } }
        first.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        let second = try system.singleton(key: "phoenix") { try system.spawn { CountedActor(counter) } }
        #expect(second != first)
        #expect(counter.count == 2)
        #expect(try system.singleton(key: "phoenix") { try system.spawn { CountedActor(counter) } } == second)
        first.tell(1)  // the old ref still dead-letters
        #expect(system.deadLetters.count == 1)
        system.shutdown()
    }

    @Test("a singleton can be any kind of actor: a sequential one made by a closure")
    func sequentialSingleton() throws {
        let system = try makeSystem()
        let made = Atomic<Int>(0)
        let probe = SignalingProbe<Int>()
        let make: () throws(ActorSystemError) -> ActorRef<Int> = {
            made.wrappingAdd(1, ordering: .relaxed)
            return try system.spawn { (inbox: Inbox<Int>) in
                for await message in inbox { probe.record(message) }
            }
        }
        let first = try system.singleton(key: "seq", create: make)
        let second = try system.singleton(key: "seq", create: make)
        #expect(first == second)
        #expect(made.load(ordering: .relaxed) == 1)
        second.tell(5)
        #expect(probe.waitForCount(1))
        #expect(probe.values == [5])
        system.shutdown()
        #expect(throws: ActorSystemError.shutDown) {
            try system.singleton(key: "late") { try system.spawn { CountedActor(MadeCounter()) } }
        }
    }

}
