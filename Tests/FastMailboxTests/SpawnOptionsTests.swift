// The one spawn: every kind of behaviour (event actor, closure, value, sequential body)
// with every placement and as a pool, the options refused with a clear error, value
// behaviours keeping their state, and children spawned from a context.

import Foundation
import MNScheduler
import Synchronization
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit

/// The four kinds of behaviour `spawn` takes.
enum BehaviourKind: String, Sendable, CaseIterable, CustomStringConvertible {
    case eventActor, closure, value, sequential
    var description: String { rawValue }
}

/// Records each message with the thread that handled it.
typealias ThreadTags = SignalingProbe<(message: Int, thread: UInt)>

private func currentThread() -> UInt { UInt(pthread_self()) }

private final class TaggingActor: EventActor {
    let tags: ThreadTags
    init(_ tags: ThreadTags) { self.tags = tags }
    func receive(_ message: Int, context: ActorContext<Int>) { tags.record((message, currentThread())) }
}

private struct TaggingValue: ActorBehavior {
    let tags: ThreadTags
    var handled = 0
    mutating func receive(_ message: Int, context: ActorContext<Int>) {
        handled += 1
        tags.record((message, currentThread()))
    }
}

/// Spawns an actor of `kind` that records every message in `tags`.
private func spawnTagger(_ kind: BehaviourKind, on system: ActorSystem, options: SpawnOptions,
                         tags: ThreadTags) throws -> ActorRef<Int> {
    switch kind {
    case .eventActor: return try system.spawn(options: options) { TaggingActor(tags) }
    case .closure: return try system.spawn(of: Int.self, options: options) { message, _ in tags.record((message, currentThread())) }
    case .value: return try system.spawn(options: options, TaggingValue(tags: tags))
    case .sequential:
        return try system.spawn(of: Int.self, options: options) { inbox in
            for await message in inbox { tags.record((message, currentThread())) }
        }
    }
}

/// Messages of the value-behaviour tests.
enum TallyMessage: Sendable {
    case add(Int)
    case report
    case fail
}

/// A value behaviour whose state is the list of numbers it was sent.
struct Tally: ActorBehavior {
    let reports: Probe<[Int]>
    var seen: [Int] = []
    mutating func receive(_ message: TallyMessage, context: ActorContext<TallyMessage>) throws {
        switch message {
        case .add(let n): seen.append(n)
        case .report: reports.record(seen)
        case .fail: throw TestFailure.boom
        }
    }
}

@Suite("Spawning with options", .serialized) struct SpawnOptionsTests {
    @Test("every behaviour runs on every placement: messages in order, on the placement's threads",
          arguments: BehaviourKind.allCases, [SpawnOptions.Placement.workers, .dedicatedThread, .mainThread])
    func behaviourOnPlacement(kind: BehaviourKind, placement: SpawnOptions.Placement) throws {
        let system = try makeSystem()
        let tags = ThreadTags()
        let ref = try spawnTagger(kind, on: system, options: SpawnOptions(name: "tagger", placement: placement), tags: tags)
        let donor = Atomic<UInt>(0)
        let donorReturned = DispatchSemaphore(value: 0)
        if placement == .mainThread {
            Thread {
                donor.store(currentThread(), ordering: .sequentiallyConsistent)
                system.runMainThreadActors()
                donorReturned.signal()
            }.start()
        }
        for i in 0..<50 { ref.tell(i) }
        #expect(tags.waitForCount(50))
        #expect(tags.values.map(\.message) == Array(0..<50))
        let threads = Set(tags.values.map(\.thread))
        switch placement {
        case .workers: break
        case .dedicatedThread: #expect(threads.count == 1, "turns ran on \(threads.count) threads")
        case .mainThread: #expect(threads == [donor.load(ordering: .sequentiallyConsistent)])
        }
        #expect(system.lookup("tagger", as: Int.self) != nil || placement != .workers,
                "an actor on the workers is registered under its name")
        let report = system.shutdown()
        #expect(report.isBalanced, "\(report)")
        if placement == .mainThread { #expect(donorReturned.wait(timeout: .now() + 20) == .success) }
    }

    @Test("every behaviour but a sequential body can form a pool, on the workers or on dedicated threads",
          arguments: [BehaviourKind.eventActor, .closure, .value], [SpawnOptions.Placement.workers, .dedicatedThread])
    func pools(kind: BehaviourKind, placement: SpawnOptions.Placement) throws {
        let system = try makeSystem()
        let tags = ThreadTags()
        let options = SpawnOptions(name: "pool", placement: placement, pool: SpawnOptions.Pool(size: 3))
        let pool = try spawnTagger(kind, on: system, options: options, tags: tags)
        #expect(system.routees(of: pool)?.count == 3)
        #expect(system.lookup("pool", as: Int.self) == pool)
        for i in 0..<30 { pool.tell(i) }
        #expect(tags.waitForCount(30))
        #expect(tags.values.map(\.message).sorted() == Array(0..<30))
        if placement == .dedicatedThread {
            #expect(Set(tags.values.map(\.thread)).count == 3, "round-robin over three routees, each on its own thread")
        }
        let report = system.shutdown()
        #expect(report.isBalanced, "\(report)")
    }

    @Test("options that cannot go together are refused with an error naming the problem, nothing left running")
    func unsupportedCombinations() throws {
        let system = try makeSystem()
        func isUnsupported(_ body: () throws -> Void) -> String? {
            do { try body() } catch ActorSystemError.unsupportedSpawnOptions(let reason) { return reason } catch { return "\(error)?" }
            return nil
        }
        let sequentialSupervised = isUnsupported {
            try system.spawn(of: Int.self, options: SpawnOptions(supervisor: .stop)) { _ in }
        }
        #expect(sequentialSupervised?.contains("supervisor") == true, "\(String(describing: sequentialSupervised))")
        let sequentialBounded = isUnsupported {
            try system.spawn(of: Int.self, options: SpawnOptions(mailboxKind: .bounded)) { _ in }
        }
        #expect(sequentialBounded?.contains("bounded") == true)
        let sequentialPool = isUnsupported {
            try system.spawn(of: Int.self, options: SpawnOptions(name: "p", pool: SpawnOptions.Pool(size: 2))) { _ in }
        }
        #expect(sequentialPool?.contains("pool") == true)
        let boundedPool = isUnsupported {
            try system.spawn(options: SpawnOptions(name: "p", mailboxKind: .bounded, pool: SpawnOptions.Pool(size: 2))) {
                Counter()
            }
        }
        #expect(boundedPool?.contains("bounded") == true)
        #expect(throws: ActorSystemError.invalidPoolSize(0)) {
            try system.spawn(options: SpawnOptions(name: "p", pool: SpawnOptions.Pool(size: 0))) { Counter() }
        }
        #expect(system.lookup("p", as: CounterMessage.self) == nil, "a refused pool leaves its name free")
        #expect(system.metrics.liveActors == 0)
        #expect(ActorSystemError.unsupportedSpawnOptions("why").description.contains("why"))
        system.shutdown()
    }

    @Test("a child spawn refuses a placement off the workers and a pool, and the parent goes on")
    func childOptionsRefused() throws {
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic)
        let errors = Probe<String>()
        let parent = try system.spawn(of: Int.self) { _, context in
            for options in [SpawnOptions(placement: .dedicatedThread), SpawnOptions(placement: .mainThread),
                            SpawnOptions(pool: SpawnOptions.Pool(size: 2))] {
                do {
                    try context.spawn(options: options) { Counter() }
                    errors.record("spawned")
                } catch {
                    errors.record("\(error)")
                }
            }
        }
        parent.tell(1)
        _ = try deterministic.runUntilQuiescent()
        #expect(errors.count == 3)
        #expect(errors.values.allSatisfy { $0.hasPrefix("unsupported spawn options: ") }, "\(errors.values)")
        #expect(system.metrics.liveActors == 1)
        #expect(system.shutdown().isBalanced)
    }

    @Test("threaded placements and sequential bodies are refused on a deterministic scheduler")
    func deterministicRefusals() throws {
        let system = makeDeterministicSystem(DeterministicScheduler(seed: 2))
        for placement in [SpawnOptions.Placement.dedicatedThread, .mainThread] {
            do {
                try system.spawn(options: SpawnOptions(placement: placement), Tally(reports: Probe()))
                Issue.record("spawned with placement \(placement)")
            } catch {
                guard case .unsupportedOnDeterministicScheduler(let what) = error else { Issue.record("\(error)"); continue }
                #expect(what.contains("\(placement)"), "\(what)")
            }
        }
        #expect(throws: ActorSystemError.unsupportedOnDeterministicScheduler("spawn of a sequential body")) {
            try system.spawn(of: Int.self) { _ in }
        }
        system.shutdown()
    }

    @Test("a value behaviour keeps its state across messages, in the order sent, and a restart starts from the spawned value")
    func valueBehaviourState() throws {
        let deterministic = DeterministicScheduler(seed: 3)
        let system = makeDeterministicSystem(deterministic)
        let reports = Probe<[Int]>()
        let tally = try system.spawn(options: SpawnOptions(name: "tally"), Tally(reports: reports, seen: [-1]))
        for i in 0..<100 { tally.tell(.add(i)) }
        tally.tell(.report)
        _ = try deterministic.runUntilQuiescent()
        #expect(reports.values == [[-1] + Array(0..<100)])
        tally.tell(.fail)  // the default supervisor restarts it
        tally.tell(.add(7))
        tally.tell(.report)
        _ = try deterministic.runUntilQuiescent()
        #expect(reports.values.last == [-1, 7], "a restart begins again from the value passed to spawn")
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 104, "\(report)")
    }

    @Test("a value behaviour honours its supervisor option and a bounded mailbox")
    func valueBehaviourOptions() throws {
        let deterministic = DeterministicScheduler(seed: 4)
        let system = makeDeterministicSystem(deterministic)
        let reports = Probe<[Int]>()
        let bounded = try system.spawn(options: SpawnOptions(mailboxCapacity: 4, mailboxKind: .bounded,
                                                             supervisor: .stop), Tally(reports: reports))
        for i in 0..<3 {  // a ring of 4 slots holds 3 messages
            guard case .accepted = bounded.trySend(.add(i)) else { Issue.record("refused \(i)"); return }
        }
        guard case .full(.add(3)) = bounded.trySend(.add(3)) else { Issue.record("a fourth message fitted"); return }
        _ = try deterministic.runUntilQuiescent()
        bounded.tell(.report)
        bounded.tell(.fail)  // .stop: the actor stops, later messages are dead letters
        _ = try deterministic.runUntilQuiescent()
        #expect(reports.values == [[0, 1, 2]])
        bounded.tell(.report)
        _ = try deterministic.runUntilQuiescent()
        #expect(reports.count == 1)
        #expect(system.deadLetters.count == 1)
        #expect(system.shutdown().isBalanced)
    }

    @Test("ActorContext.spawn makes children of each kind, which stop with their parent")
    func childrenOfEachKind() throws {
        let deterministic = DeterministicScheduler(seed: 5)
        let system = makeDeterministicSystem(deterministic)
        let reports = Probe<[Int]>()
        let heard = Probe<String>()
        final class Parent: EventActor {
            let reports: Probe<[Int]>
            let heard: Probe<String>
            init(reports: Probe<[Int]>, heard: Probe<String>) { self.reports = reports; self.heard = heard }
            func preStart(context: ActorContext<String>) throws {
                let heard = self.heard
                let event = try context.spawn(options: SpawnOptions(name: "event-child")) {
                    ClosureActor { (m: Int, _) in heard.record("event \(m)") }
                }
                let closure = try context.spawn(of: Int.self, options: SpawnOptions(name: "closure-child")) { m, _ in
                    heard.record("closure \(m)")
                }
                let value = try context.spawn(options: SpawnOptions(name: "value-child"), Tally(reports: reports))
                event.tell(1)
                closure.tell(2)
                value.tell(.add(3))
                value.tell(.report)
            }
            func receive(_ message: String, context: ActorContext<String>) {}
        }
        let parent = try system.spawn { Parent(reports: reports, heard: heard) }
        _ = try deterministic.runUntilQuiescent()
        #expect(Set(heard.values) == ["event 1", "closure 2"])
        #expect(reports.values == [[3]])
        #expect(system.metrics.liveActors == 4)
        parent.stop()
        _ = try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0, "children stop with their parent")
        #expect(system.lookup("value-child", as: TallyMessage.self) == nil)
        #expect(system.shutdown().isBalanced)
    }

    @Test("a closure's message type is given once: with of:, or with the ref's type")
    func closureTypeInference() throws {
        let deterministic = DeterministicScheduler(seed: 6)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<String>()
        let lines = try system.spawn(of: String.self) { line, context in probe.record("\(context.name): \(line)") }
        let numbers: ActorRef<Int> = try system.spawn(options: SpawnOptions(name: "numbers")) { n, _ in probe.record("\(n)") }
        lines.tell("hello")
        numbers.tell(42)
        _ = try deterministic.runUntilQuiescent()
        #expect(probe.values.contains("42"))
        #expect(probe.values.contains { $0.hasSuffix(": hello") })
        #expect(system.shutdown().isBalanced)
    }

    @Test("default options hold no reference and make a plain, unnamed actor")
    func defaultOptions() {
        let options = SpawnOptions()
        #expect(options.name == nil && options.supervisor == nil && options.pool == nil)
        #expect(options.mailboxCapacity == ActorSystem.defaultMailboxCapacity)
        #expect(options.mailboxKind == .growing && options.placement == .workers)
        #expect(options.isPlain)
        #expect(SpawnOptions.named("x").name == "x")
        #expect(options.references == nil && SpawnOptions.defaults.references == nil)
    }

    @Test("name and supervisor are set and cleared independently; a copy keeps its own values")
    func nameAndSupervisorFields() throws {
        var options = SpawnOptions(name: "a")
        options.supervisor = .stop
        var copy = options
        options.name = nil
        #expect(options.name == nil)
        #expect(options.supervisor?.sharesStorage(with: .stop) == true)
        #expect(copy.name == "a" && copy.supervisor?.sharesStorage(with: .stop) == true)
        options.supervisor = nil
        #expect(options.references == nil)  // both nil: nothing held
        copy.supervisor = nil
        #expect(copy.name == "a" && copy.supervisor == nil)
        // The spawn sees both fields.
        let deterministic = DeterministicScheduler(seed: 7)
        let system = makeDeterministicSystem(deterministic)
        let named: ActorRef<Int> = try system.spawn(options: SpawnOptions(name: "kept", supervisor: .stop)) { _, _ in }
        #expect(system.lookup("kept", as: Int.self) == named)
        #expect(system.shutdown().isBalanced)
    }
}
