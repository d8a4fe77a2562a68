// ActorContext+PipeToSelf — an async result delivered to the actor as a message (Akka's
// `pipeToSelf`). The operation runs in a task on the system scheduler's task executor
// (so on a DeterministicScheduler it runs when the test drives it), never in the actor's
// turn; the transform runs in that task too, and its message is an ordinary tell to
// `myself`. Nothing of the actor's state is reachable from either closure: both are
// `@Sendable`, so the compiler rejects a capture of the actor's mutable state.

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
    /// - Where it runs: `operation` and `transform` run in a new task on the actor system
    ///   scheduler's task executor (on a `DeterministicScheduler`, when the test drives
    ///   it), concurrently with the actor's turns. They must not touch the actor's state;
    ///   being `@Sendable`, they cannot capture its mutable fields.
    /// - Delivery: the transformed message is sent with `tell` to ``myself`` once the
    ///   operation ends, success or failure (a thrown error, `CancellationError` included,
    ///   arrives as `.failure`). It is ordered after the actor's own earlier sends only as
    ///   far as the operation's end comes after them.
    /// - Stopped actor: if the actor stopped meanwhile, the message goes to dead letters
    ///   like any tell to a stopped actor; the operation itself is not cancelled.
    /// - Returns: the task, to cancel the operation (its result then still arrives,
    ///   usually as a `.failure`).
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
