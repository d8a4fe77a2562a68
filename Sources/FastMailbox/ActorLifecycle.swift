// ActorLifecycle — an actor cell's lifecycle: its phase, the reason it stops for and the stop
// its own code asked for, and the one table that moves them. This comment is the one place
// that states the lifecycle; AnyActorCell, ActorCellBase, SequentialActorCell and Router
// only raise events (AnyActorCell.advance), and ActorLifecycleTests has the table written
// out again, independently.
//
// ## State (three bytes of the cell: AnyActorCell's `lifecycle`)
//   phase    created   spawned; no code of the actor has run yet.
//            running   started: preStart ran (or there is none: a closure actor, a pool's
//                      router); messages are handled.
//            draining  stop after drain: the mailbox is closed, what it held is still
//                      handled; the cell stops once it reports empty.
//            stopped   final: the stop ran (postStop if it had started, the termination
//                      announced); what is left or arrives late becomes a dead letter.
//   reason   why the cell drains or stopped (`.none` before: never read then). `.failed`'s
//            text lives in the cell's Extras (`phaseFailure`).
//   pending  a stop the actor's own code or its supervisor asked for during a message or a
//            hook, run when that code has returned (`.none`: none; text: `pendingFailure`).
//
// ## Events, and who raises them
//   start            the cell's first turn (ActorCellBase.startIfNeeded: preStart next;
//                    SequentialActorCell: the body's task next), or before the cell can run:
//                    spawn of a cell born running (startWithoutTurn), Router.init.
//   stopAfterDrain   a `.stop(.afterDrainingMailbox, r)` system message (ActorRef.stop, a
//                    pool's stop, shutdown with r = systemShutDown), in handleSystem.
//   stopImmediately  a `.stop(.immediately, r)` system message (ActorRef.stop, a parent that
//                    stops or restarts), in handleSystem.
//   stopFromInside   context.stop() (r = stopped); the supervisor's stop or escalate, or a
//                    restart whose preStart failed (r = failed), in handleFailure.
//   pendingStopDue   the message or hook that asked to stop has returned (finishPendingStop).
//   restart          the supervisor restarts the actor after a failure (handleFailure): the
//                    caller stops the old instance and starts a fresh one.
//   mailboxDrained   a draining cell's turn found its mailbox empty and nothing unstashed
//                    (ActorCellBase.finishTurn).
//   ended            the actor's work ended by itself: a sequential actor's body returned or
//                    threw (r from the body), or will never start because a stop came first
//                    (r = stopped); a pool's last routee terminated (Router: r = stopped if
//                    the pool was stopped, else the last routee's).
//   shutdown         the scheduler shut down and will never run the cell again
//                    (runAfterShutdown → finishAfterShutdown; r = systemShutDown).
//
// ## The table (`transition`): state × event → next state, effect, reason
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
// Effects (what the caller must do; AnyActorCell.advance does drain and fin itself):
//   start    start the behaviour (preStart, the body's task; nothing for a cell born running).
//   drain    close the mailbox (later sends are dead letters); keep handling what it holds.
//   fin      the stop (AnyActorCell.finalizeStop): free the name, close the mailbox, stop the
//            children, postStop — fin⁰: none, the actor never started —, drop become/stash
//            (stash → dead letters), announce the termination (watchers, `await
//            ref.terminated` observers, the parent), drop the instance. Clears `pending`.
//   record   set `pending` (phase unchanged): a failure replaces a pending plain stop; a
//            plain stop is recorded only when nothing is pending.
//   restart  the caller replaces the instance (phase unchanged).
//   ignored  nothing changes (the state already says more than the event); nothing is
//            written either (`apply` returns before any store).
// Reasons: e the event's; s systemShutDown; p the pending stop's; k kept (draining's);
//   k/e kept unless the event's is a failure.
// A stop of a created cell, in either mode, is fin⁰ at once: nothing ran, so nothing drains
// and its messages become dead letters. Only a sequential cell meets it (its turn reads the
// system queue before it starts the body; an event actor's first turn starts it first);
// shutdown of a created cell (one the scheduler never ran) is fin⁰ likewise.
// Illegal: the cell's code never raises it (its callers test the phase first, or the
// situation cannot arise: no actor code runs while created, nothing is pending or restarts
// once stopped); `transition` returns nil and AnyActorCell.advance fails an assertion naming
// the phase and the event (debug builds; release builds change nothing).
//
// ## Rules that follow
//   (L1) stopped is final: no row leaves it, and every event there is ignored or illegal,
//        neither of which writes, so the three bytes never change again.
//   (L2) the termination is announced once: only `fin` announces it, every transition into
//        stopped is a `fin` and none leaves stopped (L1), so a cell that stops runs exactly
//        one. A draining cell does stop: its mailbox drains, something stops it first, or
//        shutdown does.
//   (L3) the reason is written when the cell leaves created or running, and is final once
//        stopped.
//        Draining's reason stands unless the drain is cut short: an immediate stop,
//        shutdown, a stop from inside, a failing body — their reason is the one announced.
//   (L4) postStop runs only for a cell that started (fin⁰ from created), at most once (L2).
//   (L5) start happens once, from created; a cell stopped before it started never starts.
//   (L6) nothing is pending once stopped: fin clears `pending`, and stopFromInside is
//        ignored there (postStop asking to stop).
//
// ## Confinement and ordering (x86 and ARM)
// The three bytes are plain fields, turn-confined (AnyActorCell C2): every event is raised
// inside one of the cell's turns, in runAfterShutdown (which holds the cell exclusively, like
// a turn), or before anything can run the cell (spawn's startWithoutTurn, before the cell is
// registered or scheduled; Router.init). Successive turns are ordered by ScheduledUnit's
// state word (acquire-release RMWs) and the run queues' release/acquire edges, so each turn
// sees the previous turn's writes on both architectures; no atomics are needed. Other
// threads never read these bytes: they learn of a stop from the mailbox's closed bit, the
// system queue, `Terminated` messages and observers, each published by its own release
// edge after the fin that wrote the phase. (Tests read them between steps of a
// DeterministicScheduler, on the thread that runs the turns, or after `await terminated`:
// sound because of L1, though a turn may still raise ignored events on the stopped cell
// after the observers fired — a sequential body's `ended` after an `observe` of a cell
// already stopped; ThreadSanitizer saw that turn's same-value store race with the test's
// read before ignored events stopped writing.)
// Cost: `phase` is the struct's first byte; the turn's fast path reads it as one byte load
// and compare (`if case .running = phaseCode`), and `pending` per message likewise. The
// table runs only on lifecycle events, never per message, and is inlined into each place
// that raises one (AnyActorCell.advance, `transition` and `apply` are always inlined): the
// event is a constant there, so what is left is a test of the phase and the stores — a
// closure actor's start is a compare and a store, as it was before the table.

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

    /// What happens to the cell (file comment, "Events").
    enum Event: UInt8, CaseIterable, Sendable {
        case start, stopAfterDrain, stopImmediately, stopFromInside, pendingStopDue, restart, mailboxDrained, ended, shutdown
    }

    /// What the caller must do after a transition (file comment, "Effects").
    enum Effect: Equatable, Sendable {
        case ignored, start, drain, record, restart
        /// The stop; `postStop`: the actor had started (fin), else fin⁰.
        case finalize(postStop: Bool)
    }

    /// Where the reason comes from (file comment, "Reasons").
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
    /// Inlined: at each call site the event is a constant, so the table folds to a test of
    /// the phase (see "Cost" in the file comment).
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
        // are never written again (file comment, "Confinement and ordering": a reader after
        // `terminated` races with nothing).
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
