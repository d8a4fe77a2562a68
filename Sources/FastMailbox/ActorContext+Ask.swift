// ActorContext+Ask: request–reply from inside an actor. The same AskPromise as
// `ActorRef.ask`, but its CAS winner calls `completion`, which tells the transformed
// outcome to the asker. The request is sent in the caller's turn, keeping its order.

extension ActorContext {
    /// Asks `target` and receives its reply, or the ask's failure, as a message of this
    /// actor, built by `transform`.
    ///
    /// ```swift
    /// context.ask(counter, timeout: .seconds(1)) { replyTo in
    ///     .get(replyTo: replyTo)
    /// } transform: { result in
    ///     .counted(try? result.get())
    /// }
    /// ```
    ///
    /// - Request: sent now, as a ``ActorRef/tell(_:)`` after this actor's earlier sends.
    /// - Outcome: exactly one message: `.success(reply)` for the first reply, or
    ///   `.failure` with ``AskError/timedOut(requestID:recipient:after:)`` (a late reply
    ///   is a dead letter) or ``AskError/recipientStopped(requestID:recipient:)``. Timeout
    ///   as ``ActorRef/ask(timeout:isolation:_:)``.
    /// - `transform` runs on the thread that ends the ask, never in this actor's turn: it
    ///   must not touch the actor's state, and should be cheap. Its message is a tell to
    ///   ``myself`` (a dead letter if the actor stopped).
    public func ask<Request: Sendable, Reply: Sendable>(
        _ target: ActorRef<Request>, timeout: Duration = .seconds(5),
        _ makeMessage: (ActorRef<Reply>) -> Request,
        transform: @escaping @Sendable (Result<Reply, any Error>) -> Message
    ) {
        let asker = myself
        let promise = AskPromise<Reply>(asking: target.askTarget, timeout: timeout)
        promise.completion = AskCompletion<Reply> { result in asker.tell(transform(result)) }
        promise.start()
        let message = makeMessage(ActorRef<Reply>(target: .promise(promise)))
        if !MessageEncoding<Request>.withMovable(message, { ActorRef<Request>.deliver(target.target, movingFrom: $0) }) {
            promise.requestRefused()
        }
    }
}
