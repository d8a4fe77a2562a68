// ActorContext+Ask — request–reply from inside an actor: the reply, or the ask's failure,
// comes back as a message through `transform` (Akka's `context.ask`).
//
// The same AskPromise as `ActorRef.ask` (Ask.swift): a one-shot reply-to ref with a request
// id, timed out by the system's AskTimer (virtual time on a deterministic scheduler), failed
// at once when the request becomes a dead letter. Instead of resuming a continuation, the
// promise's CAS winner calls its `completion`, which tells the transformed outcome to the
// asking actor. The request is sent in the caller's turn, so it keeps its place among the
// actor's other sends to the target.

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
    /// - Request: `makeMessage` gets a one-shot reply-to ref; the request is sent now, with
    ///   ``ActorRef/tell(_:)`` ordering (after this actor's earlier sends to `target`).
    /// - Outcome: exactly one message through `transform`: `.success(reply)` for the first
    ///   reply, or `.failure` with ``AskError/timedOut(requestID:recipient:after:)`` when no
    ///   reply came within `timeout` (a late reply goes to dead letters), or
    ///   ``AskError/recipientStopped(requestID:recipient:)`` as soon as the request became a
    ///   dead letter. Timeout: as ``ActorRef/ask(timeout:isolation:_:)`` (the scheduler's
    ///   clock; a huge one means none).
    /// - Where `transform` runs: on the thread that ends the ask (the replier's turn, or
    ///   the timer's thread), never in this actor's turn: it must not touch the actor's
    ///   state (it is `@Sendable`), and it should be cheap. Its message is an ordinary
    ///   tell to ``myself``, handled in turn; if this actor stopped meanwhile, it goes to
    ///   dead letters.
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
