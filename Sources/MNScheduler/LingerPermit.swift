// LingerPermit: what a worker tells a turn about lingering (MailboxQueue.md, "Lingering"):
// the worker itself when a mailbox drain may look again briefly before going idle, or
// nothing. The worker decides (two or more workers, and no unit taken from another
// worker's next slot waiting to idle); the drain only asks it whether anything else is
// runnable. Passed down the turn, never read from a thread-local.

/// Whether, and on whose behalf, a drain in this turn may linger. Valid for the turn it
/// was given to, on that thread; not `Sendable`.
@frozen
public struct LingerPermit {
    /// The running worker (unretained: it outlives the turn), nil: never linger.
    @usableFromInline let worker: UnsafeMutableRawPointer?

    @inlinable package init(worker: UnsafeMutableRawPointer?) { self.worker = worker }

    /// No lingering: off the pool, one worker, after shutdown, a deterministic scheduler.
    @inlinable public static var never: LingerPermit { LingerPermit(worker: nil) }

    /// True when the permit allows lingering at all.
    @inlinable package var mayLinger: Bool { worker != nil }
}
