// MNGlobalActor — a global actor whose executor is an MNSerialExecutor on Scheduler.shared.

/// A global actor backed by `Scheduler.shared`: `@MNGlobalActor func f()` runs on the
/// shared scheduler's workers, serially (like the Swift book's `ImageDatabase`).
///
/// `MNGlobalActor.shared.tell { _ in ... }` sends work to it without waiting (``MNActor``).
///
/// Thread-safety: an actor. Using it starts `Scheduler.shared` (configured from the MN_*
/// environment; a bad value traps with the configuration error).
@globalActor public actor MNGlobalActor: MNActor {
    public static let shared = MNGlobalActor()

    /// The executor all `@MNGlobalActor` code runs on.
    public nonisolated let executor: MNSerialExecutor

    private init() {
        executor = MNSerialExecutor(scheduler: .shared)
    }

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }
}
