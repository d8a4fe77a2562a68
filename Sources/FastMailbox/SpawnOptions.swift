// SpawnOptions — how an actor is spawned, whatever its behaviour: name, mailbox, supervisor,
// placement and pool. A plain value: passed by value to every `spawn`, and the defaulted
// options hold no reference, so they cost no allocation and no reference counting.

/// How ``ActorSystem/spawn(options:_:)-(_,()->A)`` and its siblings spawn an actor: the same
/// options for every kind of behaviour (an event actor, a closure, a value behaviour, a
/// sequential body), on the system and for children (``ActorContext``).
///
/// Every option works with every behaviour, except for these combinations, which `spawn`
/// refuses with ``ActorSystemError/unsupportedSpawnOptions(_:)`` naming the problem (never a
/// trap):
/// - a sequential body with a ``supervisor`` (sequential actors are not restarted), with a
///   ``MailboxKind/bounded`` mailbox, or in a ``pool``;
/// - a ``pool`` with a ``MailboxKind/bounded`` mailbox;
/// - a child (``ActorContext``) with a ``placement`` other than ``Placement/workers`` or a
///   ``pool`` (a child lives on its parent's workers).
///
/// On a `DeterministicScheduler`, the placements ``Placement/dedicatedThread`` and
/// ``Placement/mainThread`` and sequential bodies need threads of their own:
/// ``ActorSystemError/unsupportedOnDeterministicScheduler(_:)``.
///
/// Values are `Sendable` and cheap to copy; `SpawnOptions()` holds no reference.
public struct SpawnOptions: Sendable {
    /// The actor's mailbox: a ring that grows past its capacity, or one that refuses.
    public enum MailboxKind: Sendable, Equatable {
        /// Bursts beyond the ring's capacity overflow in order: a tell never fails for room.
        /// An idle actor may give its ring back (``ActorSystem/reclaimIdleMailboxes()``).
        case growing
        /// At most `mailboxCapacity − 1` messages queued: `tell` to a full mailbox goes to dead
        /// letters, ``ActorRef/trySend(_:)`` returns `.full`, ``ActorRef/send(_:)`` waits.
        /// The ring is kept for the actor's life.
        case bounded
    }

    /// Which threads run the actor's turns.
    public enum Placement: Sendable, Equatable {
        /// The system's scheduler workers, shared with every other such actor (the default:
        /// costs no thread).
        case workers
        /// An OS thread of the actor's own: every turn (`preStart`, each `receive`,
        /// `postStop`) runs there and nothing else does. For code that must own a thread
        /// (thread-local state in a C library, a run loop) or blocks. Costs a thread and a
        /// private one-worker scheduler per actor. The name is registered in that private
        /// system, so ``ActorSystem/lookup(_:as:)`` does not find it: keep the ref. The
        /// system's shutdown shuts it down too and adds its figures to the report.
        case dedicatedThread
        /// The thread that calls ``ActorSystem/runMainThreadActors()`` (the main thread),
        /// shared by all of the system's main-thread actors, one turn at a time. Messages
        /// queue until that call runs. The name lives in a private system, as for
        /// ``dedicatedThread``.
        case mainThread
    }

    /// A pool: `size` routees of one behaviour behind one ref (see ``pool``).
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

    /// The actor's name, unique among the system's live actors (else
    /// ``ActorSystemError/duplicateName(_:)``); ``ActorSystem/lookup(_:as:)`` finds it. nil:
    /// a generated name, not registered.
    public var name: String?
    /// Ring slots of the mailbox: a power of two from 4 to `Mailbox.maximumCapacity` (else
    /// ``ActorSystemError/invalidMailboxCapacity(_:)``); the ring holds `mailboxCapacity − 1`
    /// messages before a growing mailbox overflows (in order) or a bounded one is full.
    /// Large rings are allocated at spawn (an allocation failure is then a thrown
    /// ``ActorSystemError/mailboxAllocationFailed(capacity:bytes:)``); small ones at the
    /// first message.
    public var mailboxCapacity: Int
    /// Growing (default) or bounded.
    public var mailboxKind: MailboxKind
    /// Decides about the actor's failures. nil: the parent's strategy
    /// (``EventActor/supervisorStrategy``), for a top-level actor the system's
    /// ``ActorSystem/defaultSupervisor``.
    public var supervisor: SupervisorStrategy?
    /// Which threads run the actor (default: the scheduler's workers).
    public var placement: Placement
    /// When set, `spawn` makes a pool and returns its ref: `pool.size` routees, each spawned
    /// with the other options (named `"<name>/<index>"`), behind one ref registered under
    /// ``name``; see ``ActorSystem/routees(of:)``.
    ///
    /// - Ordering: per-sender order holds **per routee only**.
    /// - Thread-safety: the pool ref may be used from any thread; routing is lock-free.
    /// - Stopping: stopping the pool ref stops every routee; later messages go to dead
    ///   letters. The pool terminates when its last routee has; a routee that stops for
    ///   good is skipped. ``ActorSystemMetrics/liveActors`` counts the routees.
    /// - Throws: nothing is left running when the spawn of the pool throws.
    public var pool: Pool?

    /// Options for `spawn`; every parameter defaults to the plain case (an unnamed actor
    /// with a growing mailbox of ``ActorSystem/defaultMailboxCapacity`` slots, the parent's
    /// supervisor, on the scheduler's workers, no pool).
    @inlinable
    public init(name: String? = nil, mailboxCapacity: Int = ActorSystem.defaultMailboxCapacity,
                mailboxKind: MailboxKind = .growing, supervisor: SupervisorStrategy? = nil,
                placement: Placement = .workers, pool: Pool? = nil) {
        self.name = name
        self.mailboxCapacity = mailboxCapacity
        self.mailboxKind = mailboxKind
        self.supervisor = supervisor
        self.placement = placement
        self.pool = pool
    }

    /// Options with only a name: `system.spawn(options: .named("printer")) { Printer() }`.
    @inlinable
    public static func named(_ name: String) -> SpawnOptions { SpawnOptions(name: name) }

    /// True for the common case that `spawn` makes directly: on the workers, no pool.
    @inlinable var isPlain: Bool {
        if case .workers = placement, case .none = pool { return true }
        return false
    }

    /// A bounded mailbox.
    @inlinable var isBounded: Bool { if case .bounded = mailboxKind { true } else { false } }
}
