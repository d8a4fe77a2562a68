// TurnConfinement: debug builds check AnyActorCell's rule C2 where an `ActorContext`
// reaches user code. A context is valid for one call of `receive`, `preStart` and the
// rest. A context kept and used later from another thread would race with the cell's
// next turn, unseen by the compiler, since the cell is `@unchecked Sendable`.
//
// The rule as checked:
//  (T1) While a turn runs (or runAfterShutdown, which stands in for one), the cell's
//       `turnThread` holds the running thread's id; outside it, 0. Only that thread
//       stores it.
//  (T2) Every ActorContext operation on turn-confined state first checks
//       `turnThread == current thread`. A mismatch is reported and the operation is
//       skipped (spawn throws ``ActorSystemError/contextUsedOutsideTurn(_:)``).
//       `myself`, `id`, `name` and `system` are immutable and need no check.
// Memory ordering: a relaxed load suffices on x86 and ARM. A thread reads its own id only
// if it stored it and has not cleared it (coherence orders a thread's own writes for its
// own reads), so the running thread always passes and any other always fails.
// Release builds compile the check out. Reporting: `violationHandler`, which tests
// install; without one, a violation is an `assertionFailure` naming the operation.

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
