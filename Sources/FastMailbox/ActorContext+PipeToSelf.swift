// ActorContext+PipeToSelf: an async result delivered to the actor as a message.

extension ActorContext {
    /// Runs `operation` outside the actor's turn and sends the actor `transform` of its
    /// outcome, as an ordinary message handled in turn.
    ///
    /// ```swift
    /// context.pipeToSelf({ try await fetchProfile(id) }) { result in
    ///     switch result {
    ///     case .success(let profile): .loaded(profile)
    ///     case .failure(let error): .failed("\(error)")
    ///     }
    /// }
    /// ```
    ///
    /// - Where it runs: both closures run in a new task on the system's task executor,
    ///   concurrently with the actor's turns; being `@Sendable`, they cannot capture its
    ///   mutable state.
    /// - Delivery: a tell to ``myself`` when the operation ends; a thrown error
    ///   (`CancellationError` included) arrives as `.failure`. If the actor stopped, it is
    ///   a dead letter; the operation is not cancelled.
    /// - Returns: the task, to cancel the operation (its result still arrives).
    @discardableResult
    public func pipeToSelf<Value>(
        _ operation: @escaping @Sendable () async throws -> Value,
        transform: @escaping @Sendable (Result<Value, any Error>) -> Message
    ) -> Task<Void, Never> {
        let target = myself
        return Task(executorPreference: system.scheduler.taskExecutor) {
            let result: Result<Value, any Error>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            target.tell(transform(result))
        }
    }
}
