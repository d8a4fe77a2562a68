// MNActor: a native Swift actor whose executor is an MNSerialExecutor, and its
// fire-and-forget `tell`. Queue, ordering and shutdown are MNSerialExecutor's.
//
// Per tell: one retain of the actor, released by the drain after the call, so a queued
// closure keeps its actor alive. The closure is moved bitwise into the entry, its context
// not retained. `self` is borrowed: the caller's reference keeps the actor alive until
// tell returns (Executors.md).

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
    /// Sends `body` to run on this actor, isolated to it, without waiting for it. Callable
    /// from any thread or task, synchronous or not.
    ///
    /// - Ordering: calls made in order from one thread or one task run in that order,
    ///   told closures and awaited calls alike, one at a time.
    /// - Delivery: `body` runs exactly once. After the scheduler has shut down it still
    ///   runs, in order, on the executor's fallback serial queue; nothing told is dropped.
    /// - Cost: lock-free; no `Task`, and no allocation while the actor's queue ring has
    ///   room (``MNSerialExecutor/jobQueueCapacity`` − 1 entries). Past that the ordered
    ///   overflow takes a short lock and allocates per chunk. An actor sharing its
    ///   executor with the actor bound to it allocates per tell.
    /// - Never runs `body` on the calling thread before returning, so a caller may hold a
    ///   lock.
    /// - No reply and no back-pressure: a caller that tells faster than the actor runs
    ///   grows the actor's queue without bound.
    /// - Ownership: `body` is consumed and released after it ran; the actor is retained
    ///   once, until then.
    ///
    /// `body` is synchronous: to await from it, start a `Task` inside it.
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
            // Another actor is bound to this executor: a boxed entry.
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

/// A told closure of the bound actor, as `tell` writes it; the drain reads it as
/// `MNSerialExecutor.BoundCall`. A class-bound parameter, `isolated` or not, is passed like
/// an `AnyObject` one, so the layouts agree.
@usableFromInline
struct MNBoundCall<A: MNActor> {
    @usableFromInline let body: @Sendable (isolated A) -> Void
    @usableFromInline init(body: @escaping @Sendable (isolated A) -> Void) { self.body = body }
}

/// A told closure of another actor, in its heap box; read as `MNSerialExecutor.Call`.
@usableFromInline
struct MNActorCall<A: MNActor> {
    @usableFromInline let actor: A
    @usableFromInline let body: @Sendable (isolated A) -> Void
    @usableFromInline init(actor: A, body: @escaping @Sendable (isolated A) -> Void) {
        self.actor = actor
        self.body = body
    }
}
