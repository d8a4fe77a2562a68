// Scheduler+Task — the easy way onto the fast path: tasks that run on the scheduler.

extension Scheduler {
    /// Starts a task whose nonisolated code runs on this scheduler's workers
    /// (`Task(executorPreference: taskExecutor, ...)`). Awaited calls from it to actors on
    /// an `MNSerialExecutor` of this scheduler, and to default Swift actors, stay on the
    /// caller's worker, with no thread wake-up.
    ///
    /// Thread-safety: any thread. After `shutdown()` the task's jobs run on Swift's global
    /// concurrent executor, also when the task outlives this Scheduler.
    @discardableResult
    public func task<Success: Sendable>(
        priority: TaskPriority? = nil,
        _ operation: sending @escaping @isolated(any) () async -> Success
    ) -> Task<Success, Never> {
        Task(executorPreference: taskExecutor, priority: priority, operation: operation)
    }
}
