// ActorLifecycle: an actor cell's phase, the reason it stops for, the stop its own code
// asked for, and the one table (`transition`) that moves them. Cells only raise events
// (AnyActorCell.advance). ActorLifecycleTests checks this comment's table against the code.
//
// Phases: created (no actor code ran yet), running, draining (stop after drain: the
// mailbox is closed, what it holds is still handled) and stopped (final; what is left
// becomes a dead letter). `reason` says why the cell drains or stopped. `pending` is a
// stop asked for during a message or hook, run once that code has returned.
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
//  (L1) stopped is final: every event there is ignored or illegal, neither of which
//       writes, so the three bytes never change again.
//  (L2) the termination is announced once: only `fin` announces it, and every way into
//       stopped is a `fin`. A draining cell does stop: its mailbox drains, something
//       stops it first, or shutdown does.
//  (L3) the reason is written when the cell leaves created or running, and is final once
//       stopped. Draining's reason stands unless the drain is cut short (an immediate
//       stop, shutdown, a stop from inside, a failing body).
//  (L4) postStop runs only for a cell that started, at most once (L2).
//  (L5) start happens once, from created; a cell stopped before it started never starts.
//  (L6) nothing is pending once stopped: `fin` clears `pending`.
//
// Confinement and ordering (x86 and ARM): the three bytes are plain fields, turn-confined
// (AnyActorCell C2). Every event is raised inside a turn, in runAfterShutdown (which holds
// the cell like a turn), or before the cell can run (spawn's startWithoutTurn,
// Router.init). Successive turns are ordered by ScheduledUnit's state word and the run
// queues' edges, so no atomics are needed. Other threads never read these bytes; they learn
// of a stop through the mailbox's closed bit, system messages and observers, each
// published after the `fin` that wrote the phase. Tests that read them after
// `await terminated` rely on L1.
//
// Cost: the table runs only on lifecycle events and is always inlined, so at each call
// site the event is a constant and it folds to a test of the phase and the stores.

/// An actor cell's lifecycle state and the table that changes it (see the file comment).
@usableFromInline
struct ActorLifecycle: Equatable, Sendable {
    /// Where the cell is in its life (one byte).
    @usableFromInline enum Phase: UInt8, CaseIterable, Sendable { case created, running, draining, stopped }

    /// A `TerminationReason` in one byte; `.failed`'s text lives in the cell's Extras.
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

    /// What happens to the cell, and who raises it.
    enum Event: UInt8, CaseIterable, Sendable {
        /// The first turn (preStart or the body's task next), or before the cell can run:
        /// a cell born running (startWithoutTurn), Router.init.
        case start
        /// `.stop(.afterDrainingMailbox, r)`: ActorRef.stop, a pool's stop, shutdown.
        case stopAfterDrain
        /// `.stop(.immediately, r)`: ActorRef.stop, a parent that stops or restarts.
        case stopImmediately
        /// context.stop(), a supervisor's stop or escalate, a restart whose preStart failed.
        case stopFromInside
        /// The message or hook that asked to stop has returned (finishPendingStop).
        case pendingStopDue
        /// The supervisor restarts the actor; the caller replaces the instance.
        case restart
        /// A draining cell's turn found its mailbox empty and nothing unstashed.
        case mailboxDrained
        /// The actor's work ended by itself: a sequential body returned, threw or never
        /// started; a pool's last routee terminated.
        case ended
        /// The scheduler shut down and will never run the cell again (runAfterShutdown).
        case shutdown
    }

    /// What the caller must do after a transition (file comment, "Effects"). AnyActorCell's
    /// `advance` does `drain` and `finalize` itself.
    enum Effect: Equatable, Sendable {
        case ignored, start, drain, record, restart
        /// The stop; `postStop`: the actor had started (fin), else fin⁰.
        case finalize(postStop: Bool)
    }

    /// Where the reason comes from.
    enum ReasonRule: Equatable, Sendable {
        /// Reason and pending stay as they are.
        case unchanged
        /// e: the event's reason.
        case event
        /// s: systemShutDown.
        case systemShutDown
        /// p: the pending stop's.
        case pending
        /// k: draining's reason stays.
        case kept
        /// k/e: draining's reason stays unless the event's is a failure.
        case keptUnlessFailure
        /// record: the event's reason becomes the pending stop (a failure replaces a plain one).
        case intoPending
    }

    /// One row of the table.
    struct Transition: Equatable, Sendable {
        let next: Phase
        let effect: Effect
        let reason: ReasonRule
    }

    /// Where a `.failed` reason's text must go after `apply` (the cell keeps the texts).
    enum TextMove: Equatable, Sendable {
        case none
        /// The event's failure became the phase's reason.
        case eventToReason
        /// The pending failure became the phase's reason.
        case pendingToReason
        /// The event's failure became the pending stop.
        case eventToPending
    }

    /// The phase (first: the turn's fast path loads this byte).
    @usableFromInline private(set) var phase: Phase
    /// Why the cell drains or stopped (`.none` before).
    private(set) var reason: Reason
    /// The stop asked for during the current message or hook (`.none`: none).
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

    /// The table: what `event` does in `phase`; nil when it is illegal (never raised).
    /// Inlined: at each call site the event is a constant (file comment, "Cost").
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

    /// Applies `event` (carrying `eventReason`, `.none` when it has none) by the table.
    /// Returns the effect and where a failure's text must go, or nil, changing nothing,
    /// when the transition is illegal.
    @inline(__always)
    mutating func apply(_ event: Event, reason eventReason: Reason = .none) -> (effect: Effect, text: TextMove)? {
        guard let transition = Self.transition(phase, event) else { return nil }
        // Ignored: no store at all, not even of the same values, so a stopped cell's bytes
        // are never written again (L1).
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
