// TurnConfinement: debug builds check AnyActorCell's rule C2 where an `ActorContext`
// reaches user code: a context kept and used later from another thread would race with
// the next turn, unseen by the compiler (the cell is `@unchecked Sendable`).
//  (T1) While a turn (or runAfterShutdown) runs, the cell's `turnThread` holds the running
//       thread's id, else 0; only that thread stores it.
//  (T2) Every context operation on turn-confined state first checks `turnThread ==
//       current thread`; a mismatch is reported and skipped (spawn throws).
// A relaxed load suffices on x86 and ARM: a thread reads its own id only if it stored it
// and has not cleared it (coherence). Release builds compile the check out; without a
// test's `violationHandler`, a violation is an `assertionFailure`.

import MNScheduler
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum TurnConfinement {
    /// Records violations instead of asserting (tests).
    static let violationHandler = Lock<(@Sendable (_ operation: String, _ actor: ActorID) -> Void)?>(nil)

    /// Never 0.
    #if canImport(Glibc)
    static var currentThread: UInt { UInt(pthread_self()) | 1 }
    #else
    static var currentThread: UInt { UInt(bitPattern: pthread_self()) | 1 }
    #endif

    /// T2.
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
    /// T1; returns the previous mark, for nesting.
    @inline(__always)
    final func enterTurn() -> UInt {
        #if DEBUG
        return turnThread.exchange(TurnConfinement.currentThread, ordering: .relaxed)
        #else
        return 0
        #endif
    }

    /// T1.
    @inline(__always)
    final func leaveTurn(_ previous: UInt) {
        #if DEBUG
        turnThread.store(previous, ordering: .relaxed)
        #endif
    }

    /// T2; always true in release builds.
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
