// instruction-probe — the fixed workloads scripts/instructions.sh runs under callgrind to
// count instructions per message. Actors are written as a user writes them: event
// actors, an enum message carrying a reply-to ActorRef. Each run checks its own result and
// exits non-zero when the check fails, so a count is never taken of a broken run.
//
//   instruction-probe <workload> <n>
//     pingpong    two actors bounce `.ping(k, replyTo:)` until k == n: 2·n messages
//     threadring  503 actors pass an Int token n hops: n messages
//     fanin       this thread tells n Ints to one actor with a 32-slot mailbox: n messages
//                 (a thread outside the pool: each send enters a ring epoch section)
//     faninactor  the same n tells made by an actor, in one turn (as ring-bench's fan-in
//                 senders): n messages
//     faninclass  faninactor's n tells, as 4 senders' numbered messages, to a sink that checks
//                 each sender's order in its own state: an EventActor class with stored
//                 properties, as a user writes one: n messages
//     faninvalue  the same sink as a value behaviour (an ActorBehavior struct): n messages
//     pool        an actor tells n Ints, in one turn, to a pool of 4 actors (round robin):
//                 n messages (the router's pick and forward on top of faninactor's path)
//     mailbox     this thread sends n words to a 1024-slot Mailbox (no actor) in bursts of
//                 4096 (ring, then overflow), draining each; mailboxring: bursts of 512
//     sequential  ping-pong between two sequential actors (`for await` on their inbox): 2·n
//     spawn       this thread spawns n event actors and tells each one Int: n actors
//                 (the figure is instructions per actor: spawn, first turn, one message)
//     spawnactor  the same n closure actors spawned and told by an actor, in turns of 64
//                 (each turn then tells the spawner to go on, as ring-bench spawn's
//                 SpawnerState): n actors (spawn from a turn, first tell, the child's first
//                 turn and its going idle)
//     ask         a task on the scheduler's MNTaskExecutor makes n asks of an event actor
//                 (each with the default timeout, so the ask timer's add and remove too):
//                 n asks (each a round trip)
//     mnactor     a task on the scheduler's MNTaskExecutor awaits n calls to a native
//                 actor on an MNSerialExecutor: n calls (each a round trip)
//     swiftactor  the same n awaited calls to a default Swift actor from a task on Swift's
//                 global executor (the figure mnactor is compared with): n calls
//     mnactoractor the same n awaited calls made by a native actor on an MNSerialExecutor
//                 (a task with no task-executor preference): n calls
//     mnfloor     mnactor's n calls, same caller loop, with executors that do nothing but
//                 run jobs (NullSerialExecutor runs each job inside its enqueue,
//                 NullTaskExecutor trampolines: one thread, no queue, no atomics): the
//                 Swift runtime's own cost of an awaited call to a custom-executor actor
//                 from a task with an executor preference, the floor under mnactor
//     mnactoractorfloor  mnactoractor's calls with such executors (the caller actor's
//                 trampolines): the floor under mnactoractor
//     swiftactorpool  swiftactor's calls to a default actor, made from a task on the
//                 scheduler's MNTaskExecutor (what Swift's own actors cost from the pool:
//                 the actor's processing job and the task's way back both come to the
//                 task executor, which runs them in the lane's resume slot)
//     swiftactorpoolfloor  swiftactorpool's calls from a task preferring NullTaskExecutor
//                 (a trampoline: each job enqueued from a running one runs right after
//                 it, no queue, no atomics): the runtime's own cost of a default-actor call
//                 from a task with an executor preference, the floor under swiftactorpool
//     mntell      two native actors on MNSerialExecutors bounce a ball with MNActor.tell
//                 (fire-and-forget, a capture-free closure) until each got n: 2·n tells
//     seqspawn    not an instruction count: n sequential actors, one message each, left
//                 parked in receive; prints the heap bytes (mallinfo) per parked actor
//                 (SEQSPAWN_EXIT=1: exits with them alive, for valgrind's dhat)
//
// Run with MN_WORKERS=1; the script divides the difference between two run lengths by the
// extra messages, so set-up, shutdown and the tool's own start cancel out — but for shutdown's
// cost per actor in spawn and spawnactor, which scripts/instructions.sh --timed leaves out.

import CConcurrencyKit
import Dispatch
import FastMailbox
import MNScheduler
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum Ping: Sendable { case ping(Int, replyTo: ActorRef<Ping>) }

// The actors bind a message's payload with `switch`, as the README's examples do: with
// `if case` / `guard case` the optimizer copies the bound `replyTo` (a retain/release
// pair per message; Guarantees, "Writing receive").
final class Ponger: EventActor {
    func receive(_ message: Ping, context: ActorContext<Ping>) {
        switch message { case .ping(let k, let replyTo): replyTo.tell(.ping(k, replyTo: context.myself)) }
    }
}

final class Pinger: EventActor {
    let n: Int
    let done: DispatchSemaphore
    var received = 0
    init(n: Int, done: DispatchSemaphore) { self.n = n; self.done = done }
    func receive(_ message: Ping, context: ActorContext<Ping>) {
        switch message { case .ping(let k, let replyTo):
        received += 1
        if k >= n {
            if received != n + 1 { fatalError("pingpong: \(received) replies, expected \(n + 1)") }
            done.signal()
            return
        }
        replyTo.tell(.ping(k + 1, replyTo: context.myself))
        }
    }
}

/// The native actors of `mnactor` and `swiftactor`: one awaited call increments a count.
actor MNCounter: MNActor {
    nonisolated let executor: MNSerialExecutor
    var count = 0
    init(executor: MNSerialExecutor) { self.executor = executor }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    func increment() -> Int { count += 1; return count }
}

/// mntell's two players: each tell of `ball` answers with a tell to the peer, until the
/// pinger got n balls.
actor MNTeller: MNActor {
    final class Peer: @unchecked Sendable { var ref: MNTeller? }  // set before the first ball
    nonisolated let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let peer = Peer()
    let stopAt: Int?
    let done: DispatchSemaphore
    var received = 0
    init(executor: MNSerialExecutor, stopAt: Int?, done: DispatchSemaphore) {
        self.executor = executor
        self.stopAt = stopAt
        self.done = done
    }
    func ball() {
        received += 1
        if received == stopAt { done.signal(); return }
        peer.ref!.tell { $0.ball() }
    }
}

/// mnactoractor's caller: a native actor on an MNSerialExecutor that awaits `n` calls.
actor MNCaller: MNActor {
    nonisolated let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    init(executor: MNSerialExecutor) { self.executor = executor }
    /// Results seen, in this actor's state: updating it after each call makes every call a
    /// round trip (a loop that touched nothing of this actor's would stay on the target).
    var seen = 0
    func call(_ target: MNCounter, times n: Int) async -> Int {
        for _ in 0..<n { seen = await target.increment() }
        return seen
    }
}

/// The floor executors' one-thread trampoline: runs a job enqueued while none runs at
/// once, and one enqueued from inside a running job (the task hopping back) right after
/// that job returns. One thread only (the probe's main thread: the task's first enqueue
/// runs the whole loop).
final class Trampoline: @unchecked Sendable {
    var pending: UnownedJob?
    var running = false
    @inline(__always)
    func enqueue(_ job: UnownedJob, run: (UnownedJob) -> Void) {
        if running {
            precondition(pending == nil, "Trampoline: two jobs pending")
            pending = job
            return
        }
        running = true
        var next: UnownedJob? = job
        while let current = next {
            pending = nil
            run(current)
            next = pending
        }
        running = false
    }
}

/// mnfloor's and swiftactorpoolfloor's task executor: the trampoline.
final class NullTaskExecutor: TaskExecutor, @unchecked Sendable {
    let trampoline = Trampoline()
    func enqueue(_ job: consuming ExecutorJob) {
        trampoline.enqueue(UnownedJob(job)) { $0.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}

/// mnfloor's actor executor: runs each job inside its enqueue (the callee is idle and the
/// caller's thread waits anyway: what MNSerialExecutor's inline path does, minus its checks).
final class NullSerialExecutor: SerialExecutor, @unchecked Sendable {
    func enqueue(_ job: consuming ExecutorJob) {
        UnownedJob(job).runSynchronously(on: asUnownedSerialExecutor())
    }
}

/// mnactoractorfloor's caller executor: the trampoline, as a serial executor.
final class TrampolineSerialExecutor: SerialExecutor, @unchecked Sendable {
    let trampoline = Trampoline()
    func enqueue(_ job: consuming ExecutorJob) {
        trampoline.enqueue(UnownedJob(job)) { $0.runSynchronously(on: asUnownedSerialExecutor()) }
    }
}

/// mnfloor's actor: MNCounter on any serial executor.
actor FloorCounter {
    let executor: NullSerialExecutor
    var count = 0
    init(executor: NullSerialExecutor) { self.executor = executor }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    func increment() -> Int { count += 1; return count }
}

/// mnactoractorfloor's caller: MNCaller on a TrampolineSerialExecutor.
actor FloorCaller {
    let executor = TrampolineSerialExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    var seen = 0
    func call(_ target: FloorCounter, times n: Int) async -> Int {
        for _ in 0..<n { seen = await target.increment() }
        return seen
    }
}

actor DefaultCounter {
    var count = 0
    func increment() -> Int { count += 1; return count }
}

/// Awaits `n` calls of `call` in a task (preferring `executor` when given); checks the count.
func awaitCalls(_ n: Int, on executor: (any TaskExecutor)?, done: DispatchSemaphore,
                _ call: @escaping @Sendable () async -> Int) {
    Task(executorPreference: executor) {
        var last = 0
        for _ in 0..<n { last = await call() }
        if last != n { fatalError("awaited calls: counted \(last), expected \(n)") }
        done.signal()
    }
}

/// Replies to each request with the number of requests so far.
final class AskCounter: EventActor {
    var count = 0
    func receive(_ replyTo: ActorRef<Int>, context: ActorContext<ActorRef<Int>>) {
        count += 1
        replyTo.tell(count)
    }
}

/// A fan-in message: which of 4 senders, and its number in that sender's sequence.
struct Numbered: Sendable {
    var sender: Int
    var sequence: Int
}

/// faninclass's sink: per-sender order in stored properties of a class.
final class OrderedSinkClass: EventActor {
    var next = [Int](repeating: 0, count: 4)
    var received = 0
    let total: Int
    let done: DispatchSemaphore
    init(total: Int, done: DispatchSemaphore) { self.total = total; self.done = done }
    func receive(_ m: Numbered, context: ActorContext<Numbered>) {
        if m.sequence != next[m.sender] { fatalError("fan-in: sender \(m.sender) out of order") }
        next[m.sender] = m.sequence + 1
        received += 1
        if received == total { done.signal() }
    }
}

/// faninvalue's sink: the same state in a value behaviour.
struct OrderedSinkValue: ActorBehavior {
    var next = [Int](repeating: 0, count: 4)
    var received = 0
    let total: Int
    let done: DispatchSemaphore
    mutating func receive(_ m: Numbered, context: ActorContext<Numbered>) {
        if m.sequence != next[m.sender] { fatalError("fan-in: sender \(m.sender) out of order") }
        next[m.sender] = m.sequence + 1
        received += 1
        if received == total { done.signal() }
    }
}

/// mailbox, mailboxring: `n` words sent from this thread in bursts of `burst` into a
/// 1024-slot Mailbox, each burst drained before the next; checks their sum. A function of
/// its own, like orderedFanIn.
@inline(never)
func mailboxBursts(_ n: Int, burst: Int) {
    let mailbox = try! Mailbox<UInt>(capacity: 1024)
    var sum: UInt = 0
    var sent = 0
    while sent < n {
        let count = min(burst, n - sent)
        for i in 0..<count { _ = mailbox.send(UInt(sent + i)) }
        sent += count
        while mailbox.drain(max: 64, { sum &+= $0 }) == .more {}
    }
    if sum != UInt(n * (n - 1) / 2) { fatalError("mailbox: sum \(sum), expected \(n * (n - 1) / 2)") }
}

/// faninclass and faninvalue: one sender actor tells n numbered messages (4 senders'
/// sequences interleaved) to a sink of either kind. A function of its own, so the other
/// workloads' code in the top-level switch is compiled as before.
@inline(never)
func orderedFanIn(_ system: ActorSystem, n: Int, done: DispatchSemaphore, valueSink: Bool) throws {
    let options = SpawnOptions(mailboxCapacity: 32)
    let sink = valueSink
        ? try system.spawn(options: options, OrderedSinkValue(total: n, done: done))
        : try system.spawn(options: options) { OrderedSinkClass(total: n, done: done) }
    let sender = try system.spawn { (_: Int, _) in
        for i in 0..<n { sink.tell(Numbered(sender: i & 3, sequence: i >> 2)) }
    }
    sender.tell(0)
}

enum RingMessage: Sendable { case next(ActorRef<RingMessage>), token(Int) }

final class RingMember: EventActor {
    let done: DispatchSemaphore
    var next: ActorRef<RingMessage>?
    init(done: DispatchSemaphore) { self.done = done }
    func receive(_ message: RingMessage, context: ActorContext<RingMessage>) {
        switch message {
        case .next(let ref): next = ref
        case .token(0): done.signal()
        case .token(let hops): next!.tell(.token(hops - 1))
        }
    }
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let n = Int(arguments.last!), n > 0 else {
    print("usage: instruction-probe pingpong|threadring|fanin|faninactor|faninclass|faninvalue|pool|mailbox|mailboxring|sequential|spawn|spawnactor|ask|mnactor|mnactoractor|mnfloor|mnactoractorfloor|swiftactor|swiftactorpool|swiftactorpoolfloor|mntell|seqspawn <n>")
    exit(2)
}
let workload = arguments.first!
let system = try ActorSystem()
let done = DispatchSemaphore(value: 0)

switch workload {
case "pingpong":
    let ponger = try system.spawn { Ponger() }
    let pinger = try system.spawn { Pinger(n: n, done: done) }
    pinger.tell(.ping(0, replyTo: ponger))
case "threadring":
    let members = try (0..<503).map { _ in try system.spawn { RingMember(done: done) } }
    for (index, member) in members.enumerated() { member.tell(.next(members[(index + 1) % members.count])) }
    members[0].tell(.token(n))
case "fanin", "faninactor":
    let count = Atomic<Int>(0)
    let expected = Atomic<Int>(0)
    let sink = try system.spawn(options: SpawnOptions(mailboxCapacity: 32)) { (value: Int, _) in
        if value != expected.load(ordering: .relaxed) { fatalError("fan-in: got \(value) out of order") }
        expected.store(value + 1, ordering: .relaxed)
        if count.add(1, ordering: .relaxed).newValue == n { done.signal() }
    }
    if workload == "fanin" {
        for value in 0..<n { sink.tell(value) }
    } else {
        let sender = try system.spawn { (_: Int, _) in
            for value in 0..<n { sink.tell(value) }
        }
        sender.tell(0)
    }
case "mailbox", "mailboxring":
    mailboxBursts(n, burst: workload == "mailbox" ? 4096 : 512)
    done.signal()
case "faninclass", "faninvalue":
    try orderedFanIn(system, n: n, done: done, valueSink: workload == "faninvalue")
case "pool":
    let count = Atomic<Int>(0)
    let pool = try system.spawn(options: SpawnOptions(pool: SpawnOptions.Pool(size: 4))) { (_: Int, _) in
        if count.add(1, ordering: .relaxed).newValue == n { done.signal() }
    }
    let sender = try system.spawn { (_: Int, _) in
        for value in 0..<n { pool.tell(value) }
    }
    sender.tell(0)
case "sequential":
    final class Peer: @unchecked Sendable { var ref: ActorRef<Int>? }  // set before the first message
    let peerOfA = Peer(), peerOfB = Peer()
    let a: ActorRef<Int> = try system.spawn { inbox in
        for await k in inbox {
            if k >= 2 * n { done.signal(); return }
            peerOfA.ref!.tell(k + 1)
        }
    }
    let b: ActorRef<Int> = try system.spawn { inbox in
        for await k in inbox { peerOfB.ref!.tell(k + 1) }
    }
    peerOfA.ref = b
    peerOfB.ref = a
    a.tell(0)
case "spawn":
    let count = Atomic<Int>(0)
    for _ in 0..<n {
        let ref = try system.spawn { (_: Int, _) in
            if count.add(1, ordering: .relaxed).newValue == n { done.signal() }
        }
        ref.tell(1)
    }
case "spawnactor":
    let count = Atomic<Int>(0)
    let spawnsPerTurn = 64
    let spawner = try system.spawn { (first: Int, context: ActorContext<Int>) in
        let end = min(first + spawnsPerTurn, n)
        for _ in first..<end {
            let ref = try! system.spawn { (_: Int, _) in
                if count.add(1, ordering: .relaxed).newValue == n { done.signal() }
            }
            ref.tell(1)
        }
        if end < n { context.myself.tell(end) }
    }
    spawner.tell(0)
case "seqspawn":
    let count = Atomic<Int>(0)
    var refs: [ActorRef<Int>] = []
    refs.reserveCapacity(n)
    let heap0 = mallinfo2().uordblks
    for _ in 0..<n {
        let ref: ActorRef<Int> = try system.spawn { inbox in
            _ = try await inbox.receive()
            if count.add(1, ordering: .relaxed).newValue == n { done.signal() }
            for await _ in inbox {}  // parked until shutdown
        }
        ref.tell(1)
        refs.append(ref)
    }
    done.wait()
    usleep(300_000)  // the last body parks right after its count (one job)
    let perActor = Double(mallinfo2().uordblks - heap0) / Double(n)
    print("seqspawn: \(perActor) heap bytes per parked sequential actor")
    if getenv("SEQSPAWN_EXIT") != nil { exit(0) }  // live blocks for dhat
    done.signal()
case "ask":
    let counter = try system.spawn { AskCounter() }
    awaitCalls(n, on: system.scheduler.taskExecutor, done: done) { try! await counter.ask { $0 } }
case "mnactor":
    let counter = MNCounter(executor: MNSerialExecutor(scheduler: system.scheduler))
    awaitCalls(n, on: system.scheduler.taskExecutor, done: done) { await counter.increment() }
case "mnactoractor":
    let counter = MNCounter(executor: MNSerialExecutor(scheduler: system.scheduler))
    let caller = MNCaller(executor: MNSerialExecutor(scheduler: system.scheduler))
    Task.detached {   // not the main actor's: the main thread waits below
        let last = await caller.call(counter, times: n)
        if last != n { fatalError("awaited calls: counted \(last), expected \(n)") }
        done.signal()
    }
case "mnfloor":
    let counter = FloorCounter(executor: NullSerialExecutor())
    awaitCalls(n, on: NullTaskExecutor(), done: done) { await counter.increment() }
case "mnactoractorfloor":
    let counter = FloorCounter(executor: NullSerialExecutor())
    let caller = FloorCaller()
    Task.detached {   // its first hop, onto the caller, starts the trampoline on that thread
        let last = await caller.call(counter, times: n)
        if last != n { fatalError("awaited calls: counted \(last), expected \(n)") }
        done.signal()
    }
case "swiftactorpool":
    let counter = DefaultCounter()
    awaitCalls(n, on: system.scheduler.taskExecutor, done: done) { await counter.increment() }
case "swiftactorpoolfloor":
    let counter = DefaultCounter()
    awaitCalls(n, on: NullTaskExecutor(), done: done) { await counter.increment() }
case "mntell":
    let pinger = MNTeller(executor: MNSerialExecutor(scheduler: system.scheduler), stopAt: n, done: done)
    let ponger = MNTeller(executor: MNSerialExecutor(scheduler: system.scheduler), stopAt: nil, done: done)
    pinger.peer.ref = ponger
    ponger.peer.ref = pinger
    ponger.tell { $0.ball() }
case "swiftactor":
    let counter = DefaultCounter()
    awaitCalls(n, on: nil, done: done) { await counter.increment() }
default:
    print("unknown workload \(arguments.first!)")
    exit(2)
}
done.wait()
let report = system.shutdown()
if !report.isBalanced { fatalError("books not balanced: \(report)") }
