// ask: one caller makes `size` sequential request–reply calls to one echo actor and
// records each round trip's latency in an HdrHistogram. The caller runs outside the pool
// (a task on Swift's global executor, or a plain thread for Dispatch) or inside it (a task
// on the scheduler's MNTaskExecutor). Check: every reply echoes its request.
// The table's headline figure is the median p50; ratios are latency ratios (peer / FastMailbox).
import Dispatch
import FastMailbox
import MNScheduler

enum AskWorkload {
    enum Request: Sendable { case echo(Int, ActorRef<Int>) }

    static func run(_ cell: Cell) -> RunOutcome {
        let calls = cell.size
        let inside = cell.variant.parameter == 1
        switch cell.runtime {
        case .fastmailbox:
            let system = Blocking.system(workers: cell.workers)
            defer { _ = system.shutdown() }
            let echo = try! system.spawn { (request: Request, _: ActorContext<Request>) in
                switch request { case .echo(let n, let replyTo): replyTo.tell(n) }  // not `if case`: see PingPongWorkload
            }
            return measure(calls: calls, caller: inside ? system.scheduler.taskExecutor : nil) { n in
                (try? await echo.ask { .echo(n, $0) }) == n
            }
        case .mnActor:
            let scheduler = Blocking.scheduler(workers: cell.workers)
            defer { scheduler.shutdown() }
            let echo = MNEcho(executor: MNSerialExecutor(scheduler: scheduler))
            return measure(calls: calls, caller: inside ? scheduler.taskExecutor : nil) { await echo.echo($0) == $0 }
        case .swift:
            if inside { return .failed("Swift's default pool has no inside/outside distinction; see the outside row") }
            let echo = DefaultEcho()
            return measure(calls: calls, caller: nil) { await echo.echo($0) == $0 }
        case .dispatch:
            if inside { return .failed("a thread waiting on a semaphore inside Dispatch's pool is not a fair caller; see the outside row") }
            return dispatch(calls: calls)
        default:
            return .failed("ask has no \(cell.runtime) implementation")
        }
    }

    /// Runs `calls` sequential calls on a task (preferring `caller`), timing each.
    static func measure(calls: Int, caller: (any TaskExecutor)?, _ call: @escaping @Sendable (Int) async -> Bool) -> RunOutcome {
        let (t0, recorder, wrong) = Blocking.run(on: caller) { () async -> (UInt64, LatencyRecorder, Int) in
            for n in 0..<min(calls / 10, 1_000) { _ = await call(n) }  // warm-up
            var recorder = LatencyRecorder()
            var wrong = 0
            let t0 = Clock.now()
            for n in 0..<calls {
                let start = Clock.now()
                if await !call(n) { wrong += 1 }
                recorder.record(nanoseconds: Clock.now() - start)
            }
            return (t0, recorder, wrong)
        }
        return .timed(since: t0, operations: calls, check: wrong == 0 ? nil : "\(wrong) wrong or missing replies",
                      extras: recorder.extras)
    }

    /// A plain thread asks a serial queue and waits on a semaphore for each reply.
    static func dispatch(calls: Int) -> RunOutcome {
        let queue = DispatchQueue(label: "echo")
        let reply = DispatchSemaphore(value: 0)
        let box = ResultBox<Int>()
        var recorder = LatencyRecorder()
        var wrong = 0
        let t0 = Clock.now()
        for n in 0..<calls {
            let start = Clock.now()
            queue.async { box.value = n; reply.signal() }
            reply.wait()
            if box.value != n { wrong += 1 }
            recorder.record(nanoseconds: Clock.now() - start)
        }
        return .timed(since: t0, operations: calls, check: wrong == 0 ? nil : "\(wrong) wrong replies", extras: recorder.extras)
    }
}

protocol Echo: Actor {}

extension Echo {
    func echo(_ n: Int) -> Int { n }
}

actor DefaultEcho: Echo {}

actor MNEcho: Echo {
    let executor: MNSerialExecutor
    init(executor: MNSerialExecutor) { self.executor = executor }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
}
