// Scheduler+Task — the easy way onto the fast path: tasks that run on the scheduler.

extension Scheduler {
    /// Starts a task whose nonisolated code runs on this scheduler's workers
    /// (`Task(executorPreference: taskExecutor, ...)`). Awaited calls from it to actors on an
    /// `MNSerialExecutor` of this scheduler stay on the pool: the actor runs next on the
    /// same worker and the reply comes back the same way, with no thread wake-up. Calls from
    /// Swift's default pool to the same actors cost a cross-thread wake-up each instead.
    /// Calls to default (plain Swift) actors stay on the caller's worker too: the runtime
    /// sends the actor's job and the task's way back to this executor, which runs both in
    /// the caller's lane right after the job that sent them (see `MNTaskExecutor`).
    ///
    /// Thread-safety: any thread. After `shutdown()` the task's jobs run on Swift's global
    /// concurrent executor instead, also when the task resumes after this Scheduler was
    /// released: the task keeps the executor, which keeps only the scheduler's gate, never
    /// the Scheduler (see `MNTaskExecutor`).
    @discardableResult
    public func task<Success: Sendable>(
        priority: TaskPriority? = nil,
        _ operation: sending @escaping @isolated(any) () async -> Success
    ) -> Task<Success, Never> {
        Task(executorPreference: taskExecutor, priority: priority, operation: operation)
    }
}
