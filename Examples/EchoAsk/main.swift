// example-echo — request–reply with `ask` (after ActorKit's echo example).
//
//   swift run example-echo
//
// An echo actor answers every `.echo` with the same text. The program asks it a few
// times and prints the replies; shows the two ways an ask fails (no reply in time, the
// actor has stopped); times 10,000 asks from Swift's default pool and from a task on the
// scheduler's own workers (the fast path); and ends with the shutdown report.

import FastMailbox

/// What the echo actor understands. Every request carries the one-shot `replyTo` ref
/// that `ask` makes for it.
enum EchoMessage: Sendable {
    case echo(String, replyTo: ActorRef<String>)
    /// Received and ignored: an `ask` with it can only time out.
    case ignore(replyTo: ActorRef<String>)
}

/// The echo actor: no state beyond a counter, one message at a time.
final class Echo: EventActor {
    private var answered = 0

    func receive(_ message: EchoMessage, context: ActorContext<EchoMessage>) {
        switch message {
        case .echo(let text, let replyTo):
            answered += 1
            replyTo.tell(text)
        case .ignore:
            break
        }
    }

    func postStop(context: ActorContext<EchoMessage>) {
        print("  [\(context.name)] stopped after answering \(answered) asks")
    }
}

/// `count` asks in a row, each awaited before the next; returns the elapsed time.
func askInSequence(_ echo: ActorRef<EchoMessage>, count: Int) async throws -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    for i in 0..<count {
        let reply: String = try await echo.ask { .echo("#\(i)", replyTo: $0) }
        precondition(reply == "#\(i)", "wrong reply \(reply) to #\(i)")
    }
    return clock.now - start
}

/// "123.4 ms"
func milliseconds(_ d: Duration) -> String {
    let ms = Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15
    return "\((ms * 10).rounded() / 10) ms"
}

/// "12.3 µs": the mean of `count` operations that took `d` in all.
func microseconds(_ d: Duration, per count: Int) -> String {
    let us = (Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12) / Double(count)
    return "\((us * 10).rounded() / 10) µs"
}

let system = try ActorSystem(name: "echo")
print("example-echo: system '\(system.name)' on \(system.scheduler.workerCount) workers")

let echo = try system.spawn(options: SpawnOptions(name: "echo")) { Echo() }

// 1. A few asks: each awaits the actor's reply.
for word in ["hello", "from", "FastMailbox"] {
    let reply: String = try await echo.ask(timeout: .seconds(1)) { .echo(word, replyTo: $0) }
    print("  ask .echo(\"\(word)\") → \"\(reply)\"")
}

// 2. No reply within the timeout: the ask throws AskError.timedOut.
do {
    let _: String = try await echo.ask(timeout: .milliseconds(50)) { .ignore(replyTo: $0) }
    print("  unexpected: an ignored ask was answered")
} catch let error as AskError {
    print("  ask .ignore → \(error)")
}

// 3. Timing: 10,000 sequential asks from Swift's default thread pool (where a
//    nonisolated async function runs: every reply wakes the caller on another thread) and
//    from a task on the scheduler's workers (the reply resumes the task through the
//    scheduler's task executor, usually on the worker that ran the echo).
let count = 10_000
let fromDefaultPool = try await askInSequence(echo, count: count)
print("  \(count) asks from Swift's default pool:   \(milliseconds(fromDefaultPool)) (\(microseconds(fromDefaultPool, per: count)) per ask)")
let fromPool = try await Task(executorPreference: system.scheduler.taskExecutor) {
    try await askInSequence(echo, count: count)
}.value
print("  \(count) asks from a task on the workers: \(milliseconds(fromPool)) (\(microseconds(fromPool, per: count)) per ask)")
#if DEBUG
print("  (a debug build: for representative timings run `swift run -c release example-echo`)")
#endif

// 4. Asking a stopped actor fails at once with AskError.recipientStopped; the request is
//    counted as a dead letter.
echo.stop(.afterDrainingMailbox)
while system.metrics.liveActors > 0 { try await Task.sleep(for: .milliseconds(1)) }
do {
    let _: String = try await echo.ask { .echo("anyone?", replyTo: $0) }
    print("  unexpected: a stopped actor answered")
} catch let error as AskError {
    print("  ask after stop → \(error)")
}

let report = system.shutdown()
print("example-echo: shutdown: \(report)")
print("  (delivered = 3 + 1 ignored + \(2 * count) timed asks; dead-lettered = the request to the stopped actor)")
