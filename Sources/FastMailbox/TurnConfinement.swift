// TurnConfinement — AnyActorCell's confinement rule C2 ("every `var` is touched only from
// inside this cell's turns") checked in debug builds, where an `ActorContext` crosses into
// user code. A context is handed to `receive`, `preStart` and the rest for the length of
// one call; a context kept and used later from another thread (a stored context, a task
// started inside `receive` under `nonisolated(unsafe)`) would touch turn-confined state
// while the cell's next turn runs on a worker: a data race the compiler cannot see, since
// the cell is `@unchecked Sendable`.
//
// The rule as checked:
//  (T1) While a turn (or the exclusive post-shutdown finalization, which stands in for
//       one) runs, the cell's `turnThread` holds the running thread's id; outside it, 0.
//       Only the thread running the turn stores it (at the turn's start and end).
//  (T2) Every ActorContext operation that reads or writes turn-confined state (spawn,
//       stop, watch, unwatch, become, unbecome, stash, unstashAll, stashCount, children,
//       log) first checks `turnThread == current thread`. A mismatch is a violation: it is
//       reported and the operation is skipped (spawn throws
//       ``ActorSystemError/contextUsedOutsideTurn(_:)``), so the misuse touches nothing.
//       `myself`, `id`, `name` and `system` are immutable and need no check.
// Memory ordering: the check is a relaxed load. A thread reads its own id only if it
// stored it itself and has not yet cleared it (coherence of a location orders a thread's
// own writes for its own reads), so a thread running the turn always passes and any other
// thread always fails, whatever it reads of other threads' stores — on x86 and on ARM.
// Release builds compile the check out: the turn stores nothing (the hot path stays as
// it is), and a context operation's check is a call that returns true.
// Reporting: `violationHandler` (tests install one to record; a pthread Lock, which
// ThreadSanitizer sees, unlike Mutex's futex); without one, a violation
// is an `assertionFailure` naming the operation and the actor.

import MNScheduler
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum TurnConfinement {
    /// What a test installs to record violations instead of stopping at the assertion.
    /// Debug builds only.
    static let violationHandler = Lock<(@Sendable (_ operation: String, _ actor: ActorID) -> Void)?>(nil)

    /// The current thread's id as stored in `turnThread` (never 0).
    #if canImport(Glibc)
    static var currentThread: UInt { UInt(pthread_self()) | 1 }
    #else
    static var currentThread: UInt { UInt(bitPattern: pthread_self()) | 1 }
    #endif

    /// Reports `operation` on `actor`'s context outside its turn (T2).
    static func report(_ operation: String, actor: ActorID, name: String) {
        if let handler = violationHandler.withLock({ $0 }) {
            handler(operation, actor)
        } else {
            assertionFailure("ActorContext.\(operation) of actor \(name) (\(actor)) used outside the actor's turn: "
                + "a context is valid only during the call it was passed to")
        }
    }
}

extension AnyActorCell {
    /// T1: marks the current thread as running this cell's turn until `leaveTurn`. Returns
    /// the previous mark (a nested finalization restores it). Debug builds only.
    @inline(__always)
    final func enterTurn() -> UInt {
        #if DEBUG
        return turnThread.exchange(TurnConfinement.currentThread, ordering: .relaxed)
        #else
        return 0
        #endif
    }

    /// T1: the turn ended.
    @inline(__always)
    final func leaveTurn(_ previous: UInt) {
        #if DEBUG
        turnThread.store(previous, ordering: .relaxed)
        #endif
    }

    /// T2: true when the current thread runs this cell's turn (always true in release
    /// builds); otherwise reports `operation` and returns false.
    @usableFromInline
    final func checkInTurn(_ operation: String) -> Bool {
        #if DEBUG
        if turnThread.load(ordering: .relaxed) == TurnConfinement.currentThread { return true }
        TurnConfinement.report(operation, actor: id, name: name)
        return false
        #else
        return true
        #endif
    }
}
