// ActorLifecycle: an actor cell's phase, why it stops, the stop its own code asked for,
// and the one table (`transition`) that moves them; cells only raise events
// (AnyActorCell.advance). ActorLifecycleTests checks this table against the code.
//
// Phases: created (no actor code ran), running, draining (mailbox closed, what it holds
// still handled), stopped (final). `pending`: a stop asked for during a message or hook,
// run once that code returned.
//
//                    created            running              draining             stopped
//   start            running  start     illegal              illegal              illegal
//   stopAfterDrain   stopped  fin⁰ e    draining drain e     ignored              ignored
//   stopImmediately  stopped  fin⁰ e    stopped  fin e       stopped  fin e       ignored
//   stopFromInside   illegal            running  record      draining record      ignored
//   pendingStopDue   illegal            stopped  fin p       stopped  fin p       illegal
//   restart          illegal            running  restart     draining restart     illegal
//   mailboxDrained   illegal            illegal              stopped  fin k       illegal
//   ended            illegal            stopped  fin e       stopped  fin k/e     ignored
//   shutdown         stopped  fin⁰ s    stopped  fin s       stopped  fin s       ignored
// Effects: `drain` closes the mailbox. `fin` is the stop (AnyActorCell.finalizeStop);
// `fin⁰` is the stop of an actor that never started, so no postStop. `record` sets
// `pending`: a failure replaces a pending plain stop. `ignored` changes and writes
// nothing. An illegal pair is one the cells never raise: `transition` returns nil.
// Reasons: e the event's, s systemShutDown, p the pending stop's, k draining's kept,
// k/e kept unless the event's is a failure.
//
// Rules:
//  (L1) stopped is final: every event there is ignored or illegal; neither writes.
//  (L2) the termination is announced once: only `fin` does, and every way into stopped
//       is a `fin`. A draining cell does stop (drained, stopped first, or shutdown).
//  (L3) the reason is written on leaving created or running, final once stopped.
//       Draining's reason stands unless the drain is cut short.
//  (L4) postStop runs only for a cell that started, at most once (L2).
//  (L5) start happens once, from created; a cell stopped before it started never starts.
//  (L6) nothing is pending once stopped: `fin` clears `pending`.
//
// The three bytes are turn-confined plain fields; why that is sound on x86 and ARM, and
// why the table costs nothing: <doc:ActorCells>, "The lifecycle table".

/// An actor cell's lifecycle state and the table that changes it.
@usableFromInline
struct ActorLifecycle: Equatable, Sendable {
    /// One byte.
    @usableFromInline enum Phase: UInt8, CaseIterable, Sendable { case created, running, draining, stopped }

    /// `TerminationReason` in one byte (`.failed`'s text is in the cell's Extras).
    @usableFromInline enum Reason: UInt8, Sendable {
        case none, stopped, failed, systemShutDown, finished

        init(_ reason: TerminationReason) {
            switch reason {
            case .stopped: self = .stopped
            case .failed: self = .failed
            case .systemShutDown: self = .systemShutDown
            case .finished: self = .finished
            }
        }
    }

    /// What happens to the cell; each case says who raises it.
    enum Event: UInt8, CaseIterable, Sendable {
        /// The first turn, or before the cell can run.
        case start
        /// ActorRef.stop, a pool's stop, shutdown.
        case stopAfterDrain
        /// ActorRef.stop, a parent that stops or restarts.
        case stopImmediately
        /// context.stop(), a supervisor's stop or escalate, a failed restart.
        case stopFromInside
        /// The code that asked to stop has returned.
        case pendingStopDue
        /// The caller replaces the instance.
        case restart
        /// A draining turn found nothing left.
        case mailboxDrained
        /// A sequential body returned, threw or never started; a pool's last routee ended.
        case ended
        /// runAfterShutdown.
        case shutdown
    }

    /// What the caller must do; `advance` does `drain` and `finalize`.
    enum Effect: Equatable, Sendable {
        case ignored, start, drain, record, restart
        /// `postStop`: fin, else fin⁰.
        case finalize(postStop: Bool)
    }

    /// The Reasons legend of the file comment.
    enum ReasonRule: Equatable, Sendable {
        /// Reason and pending unchanged.
        case unchanged
        /// e
        case event
        /// s
        case systemShutDown
        /// p
        case pending
        /// k
        case kept
        /// k/e
        case keptUnlessFailure
        /// record (a failure replaces a plain pending stop).
        case intoPending
    }

    /// One row of the table.
    struct Transition: Equatable, Sendable {
        let next: Phase
        let effect: Effect
        let reason: ReasonRule
    }

    /// Where a `.failed` text must go after `apply`.
    enum TextMove: Equatable, Sendable {
        case none
        /// Into the phase's reason.
        case eventToReason
        /// From pending into the phase's reason.
        case pendingToReason
        /// Into the pending stop.
        case eventToPending
    }

    /// First: the turn's fast path loads this byte.
    @usableFromInline private(set) var phase: Phase
    /// `.none` before.
    private(set) var reason: Reason
    /// A stop asked for during the current message or hook.
    @usableFromInline private(set) var pending: Reason

    /// A spawned cell: created, no reason, nothing pending.
    init() {
        phase = .created
        reason = .none
        pending = .none
    }

    /// Any state (tests).
    init(phase: Phase, reason: Reason, pending: Reason) {
        self.phase = phase
        self.reason = reason
        self.pending = pending
    }

    /// nil when illegal (never raised). Inlined: the event is a constant at each call site.
    @inline(__always)
    static func transition(_ phase: Phase, _ event: Event) -> Transition? {
        func to(_ next: Phase, _ effect: Effect, _ reason: ReasonRule) -> Transition {
            Transition(next: next, effect: effect, reason: reason)
        }
        let ignored = Transition(next: phase, effect: .ignored, reason: .unchanged)
        switch (phase, event) {
        case (.created, .start): return to(.running, .start, .unchanged)
        case (.created, .stopAfterDrain): return to(.stopped, .finalize(postStop: false), .event)
        case (.created, .stopImmediately): return to(.stopped, .finalize(postStop: false), .event)
        case (.created, .shutdown): return to(.stopped, .finalize(postStop: false), .systemShutDown)
        case (.created, .stopFromInside), (.created, .pendingStopDue), (.created, .restart),
             (.created, .mailboxDrained), (.created, .ended): return nil

        case (.running, .stopAfterDrain): return to(.draining, .drain, .event)
        case (.running, .stopImmediately): return to(.stopped, .finalize(postStop: true), .event)
        case (.running, .stopFromInside): return to(.running, .record, .intoPending)
        case (.running, .pendingStopDue): return to(.stopped, .finalize(postStop: true), .pending)
        case (.running, .restart): return to(.running, .restart, .unchanged)
        case (.running, .ended): return to(.stopped, .finalize(postStop: true), .event)
        case (.running, .shutdown): return to(.stopped, .finalize(postStop: true), .systemShutDown)
        case (.running, .start), (.running, .mailboxDrained): return nil

        case (.draining, .stopAfterDrain): return ignored
        case (.draining, .stopImmediately): return to(.stopped, .finalize(postStop: true), .event)
        case (.draining, .stopFromInside): return to(.draining, .record, .intoPending)
        case (.draining, .pendingStopDue): return to(.stopped, .finalize(postStop: true), .pending)
        case (.draining, .restart): return to(.draining, .restart, .unchanged)
        case (.draining, .mailboxDrained): return to(.stopped, .finalize(postStop: true), .kept)
        case (.draining, .ended): return to(.stopped, .finalize(postStop: true), .keptUnlessFailure)
        case (.draining, .shutdown): return to(.stopped, .finalize(postStop: true), .systemShutDown)
        case (.draining, .start): return nil

        case (.stopped, .stopAfterDrain), (.stopped, .stopImmediately), (.stopped, .stopFromInside),
             (.stopped, .ended), (.stopped, .shutdown): return ignored
        case (.stopped, .start), (.stopped, .pendingStopDue), (.stopped, .restart),
             (.stopped, .mailboxDrained): return nil
        }
    }

    /// Applies `event` by the table; nil, changing nothing, when illegal.
    @inline(__always)
    mutating func apply(_ event: Event, reason eventReason: Reason = .none) -> (effect: Effect, text: TextMove)? {
        guard let transition = Self.transition(phase, event) else { return nil }
        // No store at all, so a stopped cell's bytes are never written again (L1).
        if case .ignored = transition.effect { return (.ignored, .none) }
        var text = TextMove.none
        switch transition.reason {
        case .unchanged, .kept:
            break
        case .event:
            assert(eventReason != .none, "ActorLifecycle: \(event) needs a reason")
            reason = eventReason
            if eventReason == .failed { text = .eventToReason }
        case .systemShutDown:
            reason = .systemShutDown
        case .pending:
            reason = pending
            if pending == .failed { text = .pendingToReason }
        case .keptUnlessFailure:
            if eventReason == .failed { reason = .failed; text = .eventToReason }
        case .intoPending:
            assert(eventReason != .none, "ActorLifecycle: \(event) needs a reason")
            if eventReason == .failed || pending == .none {
                pending = eventReason
                if eventReason == .failed { text = .eventToPending }
            }
        }
        if case .finalize = transition.effect { pending = .none }
        phase = transition.next
        return (transition.effect, text)
    }
}
