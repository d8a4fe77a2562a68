// MNActor — a native Swift actor whose executor is an MNSerialExecutor, and its
// fire-and-forget `tell`. The queue, the ordering and the shutdown behaviour are
// MNSerialExecutor's (see the file comment there); this file only types the entry point.
//
// Reference counting per tell (issue 9, item 3): one retain, of the actor, taken here and
// released by the drain after the call — the entry's, inherent: a queued closure must keep
// its actor alive (and with it the executor the actor holds) until it ran. The closure is
// taken `consuming` and moved bitwise into the entry, so its context is not retained here
// (nor released by a caller that formed it for the call); the drain releases it once, after
// the call (a null context, for a closure that captures nothing: nothing to free). `self` is
// borrowed, not consumed, on purpose: the enqueue still reads the executor after the entry
// is visible (the push's idle-flag check, the schedule), and once visible the entry may be
// drained and its actor released by a worker; the caller's own reference keeps the actor,
// hence the executor, alive until tell returns. (Consuming `self` instead would hand the
// caller's reference to the entry but cost a retain of the executor for that window.) The
// executor's own retain/release pair is the schedule's (ScheduledUnit's Lifetime, L2/L3:
// an MNSerialExecutor has no owner), once per turn, not per tell; it keeps the executor
// alive until its turn ends even when that turn's last release frees the actor.

/// A native Swift actor that runs on an ``MNSerialExecutor``: conforming to it adds
/// ``tell(_:)``, a fire-and-forget call.
///
/// ```swift
/// actor Counter: MNActor {
///     nonisolated let executor = MNSerialExecutor(scheduler: .shared)
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
///     var count = 0
/// }
///
/// counter.tell { $0.count += 1 }   // returns at once; runs on the actor, in order
/// ```
///
/// The actor's `unownedExecutor` must return `executor.asUnownedSerialExecutor()`;
/// `tell` checks it and traps, naming the actor, when it does not.
public protocol MNActor: Actor {
    /// The executor this actor runs on: its `unownedExecutor` is
    /// `executor.asUnownedSerialExecutor()`.
    nonisolated var executor: MNSerialExecutor { get }
}

extension MNActor {
    /// Sends `body` to run on this actor, isolated to it, without waiting for it: the
    /// fire-and-forget counterpart of an awaited call. Callable from any thread or task,
    /// synchronous or not.
    ///
    /// - Ordering: calls made in order — from one thread, or from one task (which makes
    ///   them one after another, on whichever thread) — run in that order, closures told and
    ///   awaited calls alike. Closures run one at a time, never concurrently with the
    ///   actor's other work.
    /// - Delivery: `body` runs exactly once. After the executor's scheduler has shut down
    ///   it still runs, in order, on the executor's fallback serial queue (isolation checks
    ///   still pass there); nothing told is dropped.
    /// - Cost: lock-free (a ring push, plus a `schedule` when the actor was idle); no `Task`
    ///   is created and this call allocates nothing while the actor's queue ring has room
    ///   (``MNSerialExecutor/jobQueueCapacity`` − 1 entries waiting; past that its ordered
    ///   overflow takes a short lock and one allocation per chunk of up to 1,024 entries). The exception: an actor sharing its executor with another actor that
    ///   told through it first pays one allocation per tell. A closure that captures values
    ///   is allocated by Swift when it is formed, as any escaping closure is.
    /// - Never runs `body` on the calling thread before returning (unlike an awaited call,
    ///   whose caller waits anyway), so a caller may hold a lock.
    /// - No reply and no back-pressure: `body` returns nothing to the caller (await a call
    ///   for that), and a caller that tells faster than the actor runs grows the actor's
    ///   queue (its overflow chunks) without bound; nothing tells it to slow down.
    /// - Ownership: `body` is consumed: the queue keeps it (no copy) until it ran, then
    ///   releases it; the actor is retained once, until its closure ran.
    /// - Instructions: a tell and the turn that runs it take about 540 instructions in a
    ///   ping-pong of two actors (`scripts/instructions.sh mntell`), against about 2,450
    ///   for an awaited call from a task on the scheduler (most of which is Swift's
    ///   executor switching, which a tell does not enter).
    ///
    /// `body` is synchronous: to await from it, start a `Task` inside it (that task is
    /// isolated to the actor too).
    @inlinable  // specialized in the caller: no generic-metadata lookup per call
    public nonisolated func tell(_ body: consuming @escaping @Sendable (isolated Self) -> Void) {
        let executor = self.executor
        precondition(Self.runs(on: executor, unownedExecutor),
                     "MNActor.tell: \(Self.self)'s unownedExecutor is not its executor's asUnownedSerialExecutor()")
        assert(MemoryLayout<MNBoundCall<Self>>.size == MNSerialExecutor.entryBytes, "MNBoundCall layout")
        let me = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        if executor.isBound(to: me) {
            _ = Unmanaged.passRetained(self)   // the entry's retain of the actor (see the drain)
            var call = Optional(MNBoundCall(body: body))  // moved, not copied, into the slot
            withUnsafeTemporaryAllocation(of: MNBoundCall<Self>.self, capacity: 1) { buffer in
                buffer.baseAddress!.initialize(to: call.take().unsafelyUnwrapped)
                executor.enqueue(movingCall: buffer.baseAddress!)  // the queue owns it now
            }
        } else {
            // Another actor is bound to this executor: a boxed entry (one allocation).
            let box = UnsafeMutablePointer<MNActorCall<Self>>.allocate(capacity: 1)
            box.initialize(to: MNActorCall(actor: self, body: body))
            var words = (MNSerialExecutor.boxTag, UInt(bitPattern: box))
            executor.enqueue(movingCall: &words)
        }
    }

    /// True when `unowned` is `executor` (compares the executor's identity word).
    @usableFromInline @inline(__always)
    static func runs(on executor: MNSerialExecutor, _ unowned: UnownedSerialExecutor) -> Bool {
        unsafeBitCast(unowned, to: (UnsafeRawPointer, UInt).self).0
            == UnsafeRawPointer(Unmanaged.passUnretained(executor).toOpaque())
    }
}

/// A told closure of the executor's bound actor, as `tell` writes it into the queue; the
/// drain reads the same two words as an `MNSerialExecutor.BoundCall` and calls
/// `body(boundActor)` while it holds the actor's isolation (the drain is the actor's
/// executor: E1 in MNSerialExecutor.swift). Same layout, no conversion: a class-bound
/// parameter — `isolated` or not — is passed like an `AnyObject` one. (Converting the
/// closure with `unsafeBitCast` instead would go through generic reabstraction thunks:
/// two allocations per call.)
@usableFromInline
struct MNBoundCall<A: MNActor> {
    @usableFromInline let body: @Sendable (isolated A) -> Void
    @usableFromInline init(body: @escaping @Sendable (isolated A) -> Void) { self.body = body }
}

/// A told closure of an actor that is not the executor's bound actor, in its heap box; the
/// drain reads it as an `MNSerialExecutor.Call` (same layout: `A` is a class, so `actor`
/// is one reference like `AnyObject`).
@usableFromInline
struct MNActorCall<A: MNActor> {
    @usableFromInline let actor: A
    @usableFromInline let body: @Sendable (isolated A) -> Void
    @usableFromInline init(actor: A, body: @escaping @Sendable (isolated A) -> Void) {
        self.actor = actor
        self.body = body
    }
}
