import FastMailbox

/// What a ticker is told.
public enum TickerMessage: Sendable {
    /// A tick from the ticker's own timer.
    case tick
    /// Makes the ticker fail, to show its supervisor at work.
    case fail
}

/// The error a ticker throws when it is told to fail.
public struct TickerFailure: Error {}

/// Counts the ticks of a periodic timer and tells each count to a listener.
public final class Ticker: EventActor {
    let listener: ActorRef<Int>
    var count = 0

    /// Creates a ticker that tells its counts to `listener`.
    public init(listener: ActorRef<Int>) { self.listener = listener }

    /// Starts the timer: a `.tick` every second, until the actor stops or restarts.
    public func preStart(context: ActorContext<TickerMessage>) throws {
        try context.timers.startPeriodic(key: "tick", message: .tick, interval: .seconds(1))
    }

    /// Counts a tick, or fails.
    public func receive(_ message: TickerMessage, context: ActorContext<TickerMessage>) throws {
        switch message {
        case .tick:
            count += 1
            listener.tell(count)
        case .fail:
            throw TickerFailure()
        }
    }
}

/// Spawns a ticker named "ticker" that restarts after a failure, waiting half a second
/// before the first restart and twice as long before each one that follows.
public func spawnTicker(in system: ActorSystem, listener: ActorRef<Int>) throws -> ActorRef<TickerMessage> {
    let backoff = try SupervisorStrategy.restartWithBackoff(
        minimum: .milliseconds(500), maximum: .seconds(10), randomFactor: 0)
    return try system.spawn(options: SpawnOptions(name: "ticker", supervisor: backoff)) {
        Ticker(listener: listener)
    }
}
