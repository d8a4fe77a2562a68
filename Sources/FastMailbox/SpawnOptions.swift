// SpawnOptions: how an actor is spawned, whatever its behaviour. The name and the
// supervisor, the only fields that hold references, live together in one immutable box,
// nil while both are nil: the defaults hold no reference, so a spawn without options
// allocates, copies and releases nothing for them.

/// How ``ActorSystem/spawn(options:_:)-(_,()->A)`` and its siblings, on the system and
/// in ``ActorContext``, spawn an actor of any behaviour.
///
/// Every spawn:
/// - Thread-safety: any thread or task; the actor is registered when `spawn` returns.
/// - Ordering: messages from one sender arrive in the order sent.
/// - Throws: ``ActorSystemError`` (a taken name, a bad capacity or pool size, shut down,
///   options that cannot go together); nothing is left running.
///
/// Refused combinations (``ActorSystemError/unsupportedSpawnOptions(_:)``, never a trap):
/// - a sequential body with a ``supervisor``, a ``MailboxKind/bounded`` mailbox or a ``pool``;
/// - a ``pool`` with a ``MailboxKind/bounded`` mailbox;
/// - a child with a ``placement`` other than ``Placement/workers``, or a ``pool``.
///
/// On a `DeterministicScheduler`, ``Placement/dedicatedThread``, ``Placement/mainThread``
/// and sequential bodies throw ``ActorSystemError/unsupportedOnDeterministicScheduler(_:)``.
public struct SpawnOptions: Sendable {
    /// The actor's mailbox: a ring that grows past its capacity, or one that refuses.
    public enum MailboxKind: Sendable, Equatable {
        /// Bursts beyond the ring overflow in order: a tell never fails for room.
        case growing
        /// At most `mailboxCapacity − 1` messages queued: full means a dead letter for
        /// `tell`, `.full` for ``ActorRef/trySend(_:)``, a wait for ``ActorRef/send(_:)``.
        case bounded
    }

    /// Which threads run the actor's turns.
    public enum Placement: Sendable, Equatable {
        /// The system's scheduler workers (the default: costs no thread).
        case workers
        /// An OS thread of the actor's own, running nothing else: for code that must own
        /// a thread or blocks. Costs a thread and a private system, where the name is
        /// registered (``ActorSystem/lookup(_:as:)`` does not find it).
        case dedicatedThread
        /// The thread that calls ``ActorSystem/runMainThreadActors()``, shared by the
        /// main-thread actors; messages queue until it runs. Named as ``dedicatedThread``.
        case mainThread
    }

    /// `size` routees of one behaviour behind one ref (see ``pool``).
    public struct Pool: Sendable, Equatable {
        /// Routees, at least 1 (else ``ActorSystemError/invalidPoolSize(_:)``).
        public var size: Int
        /// How each message picks its routee.
        public var routing: RoutingStrategy

        /// A pool of `size` routees, routed by `routing`.
        public init(size: Int, routing: RoutingStrategy = .roundRobin) {
            self.size = size
            self.routing = routing
        }
    }

    /// The actor's name, unique among live actors (else
    /// ``ActorSystemError/duplicateName(_:)``). nil: a generated name, not registered.
    public var name: String? {
        @inlinable get { references?.name }
        set { references = References.unlessEmpty(name: newValue, supervisor: supervisor) }
    }
    /// Ring slots: a power of two from 4 to `Mailbox.maximumCapacity` (else
    /// ``ActorSystemError/invalidMailboxCapacity(_:)``); `mailboxCapacity − 1` messages
    /// fit before overflow. A growing mailbox's first ring is smaller and grows to this
    /// at its first burst. Large rings are allocated at spawn (else
    /// ``ActorSystemError/mailboxAllocationFailed(capacity:bytes:)``).
    public var mailboxCapacity: Int
    /// Growing (default) or bounded.
    public var mailboxKind: MailboxKind
    /// Decides about the actor's failures. nil: the parent's
    /// ``EventActor/supervisorStrategy``, or ``ActorSystem/defaultSupervisor`` at top level.
    public var supervisor: SupervisorStrategy? {
        @inlinable get { references?.supervisor }
        set { references = References.unlessEmpty(name: name, supervisor: newValue) }
    }
    /// Which threads run the actor (default: the scheduler's workers).
    public var placement: Placement
    /// When set, `spawn` returns one ref in front of `pool.size` routees named
    /// `"<name>/<index>"` (``ActorSystem/routees(of:)``).
    ///
    /// - Ordering: per-sender order holds **per routee only**.
    /// - Thread-safety: any thread; routing is lock-free.
    /// - Stopping: the pool ref stops every routee; the pool terminates with its last
    ///   one. ``ActorSystemMetrics/liveActors`` counts the routees.
    public var pool: Pool?

    /// `name` and `supervisor`; nil when both are nil. Immutable: a setter makes a new one.
    @usableFromInline var references: References?

    @usableFromInline
    final class References: Sendable {
        @usableFromInline let name: String?
        @usableFromInline let supervisor: SupervisorStrategy?

        init(name: String?, supervisor: SupervisorStrategy?) {
            self.name = name
            self.supervisor = supervisor
        }

        /// nil when there is nothing to hold.
        @usableFromInline
        static func unlessEmpty(name: String?, supervisor: SupervisorStrategy?) -> References? {
            if name == nil, supervisor == nil { return nil }
            return References(name: name, supervisor: supervisor)
        }
    }

    /// Options for `spawn`; the defaults: unnamed, a growing mailbox of
    /// ``ActorSystem/defaultMailboxCapacity`` slots, the parent's supervisor, the workers.
    @inlinable
    public init(name: String? = nil, mailboxCapacity: Int = ActorSystem.defaultMailboxCapacity,
                mailboxKind: MailboxKind = .growing, supervisor: SupervisorStrategy? = nil,
                placement: Placement = .workers, pool: Pool? = nil) {
        // Tested inline, so the defaults fold to a nil box at the call site.
        references = name == nil && supervisor == nil
            ? nil : References.unlessEmpty(name: name, supervisor: supervisor)
        self.mailboxCapacity = mailboxCapacity
        self.mailboxKind = mailboxKind
        self.placement = placement
        self.pool = pool
    }

    /// Options with only a name: `system.spawn(options: .named("printer")) { Printer() }`.
    @inlinable
    public static func named(_ name: String) -> SpawnOptions { SpawnOptions(name: name) }

    /// Every option at its default: what `spawn` uses when given no options.
    @inlinable public static var defaults: SpawnOptions { SpawnOptions() }

    /// On the workers, no pool: `spawn` makes the actor directly.
    @inlinable var isPlain: Bool {
        if case .workers = placement, case .none = pool { return true }
        return false
    }

    @inlinable var isBounded: Bool { if case .bounded = mailboxKind { true } else { false } }
}
