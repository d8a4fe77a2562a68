import MNScheduler
import Synchronization

/// Where undeliverable messages go: a counter and a stream users can subscribe to.
///
/// Thread-safety: any thread. Publishing costs two relaxed increments, plus a short lock
/// only while someone subscribes; the system also logs dead letters, rate-limited, at info.
public final class DeadLetterOffice: Sendable {
    /// Relaxed increments by any thread.
    private let counter = Atomic<Int>(0)
    /// Publishing takes no lock when nobody listens.
    private let subscriberCount = Atomic<Int>(0)
    private let subscribers = Lock<[UInt64: AsyncStream<DeadLetter>.Continuation]>([:])
    private let nextSubscriber = Atomic<UInt64>(0)
    /// Per reason, in DeadLetterReason's declaration order.
    private let recipientStopped = Atomic<Int>(0)
    private let askTimedOut = Atomic<Int>(0)
    private let duplicateReply = Atomic<Int>(0)
    private let systemShutDown = Atomic<Int>(0)
    private let mailboxFull = Atomic<Int>(0)

    init() {}

    /// Number of dead letters so far.
    public var count: Int { counter.load(ordering: .acquiring) }

    /// Dead letters so far, by reason (a snapshot; see ``ActorSystem/metrics``).
    public var countsByReason: ActorSystemMetrics.DeadLetterCounts {
        ActorSystemMetrics.DeadLetterCounts(recipientStopped: recipientStopped.load(ordering: .relaxed),
                         askTimedOut: askTimedOut.load(ordering: .relaxed),
                         duplicateReply: duplicateReply.load(ordering: .relaxed),
                         systemShutDown: systemShutDown.load(ordering: .relaxed),
                         mailboxFull: mailboxFull.load(ordering: .relaxed))
    }

    /// Every dead letter published after this call. Buffers up to `bufferLimit` for a slow
    /// reader (older ones are dropped from the stream, still counted). Ends when the
    /// subscription's task is cancelled.
    public func subscribe(bufferLimit: Int = 10_000) -> AsyncStream<DeadLetter> {
        let key = nextSubscriber.wrappingAdd(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<DeadLetter>.makeStream(bufferingPolicy: .bufferingNewest(bufferLimit))
        subscribers.withLock { $0[key] = continuation }
        subscriberCount.wrappingAdd(1, ordering: .releasing)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            if self.subscribers.withLock({ $0.removeValue(forKey: key) }) != nil {
                self.subscriberCount.wrappingSubtract(1, ordering: .releasing)
            }
        }
        return stream
    }

    func publish(_ letter: DeadLetter) {
        counter.wrappingAdd(1, ordering: .acquiringAndReleasing)
        switch letter.reason {
        case .recipientStopped: recipientStopped.wrappingAdd(1, ordering: .relaxed)
        case .askTimedOut: askTimedOut.wrappingAdd(1, ordering: .relaxed)
        case .duplicateReply: duplicateReply.wrappingAdd(1, ordering: .relaxed)
        case .systemShutDown: systemShutDown.wrappingAdd(1, ordering: .relaxed)
        case .mailboxFull: mailboxFull.wrappingAdd(1, ordering: .relaxed)
        }
        guard subscriberCount.load(ordering: .acquiring) > 0 else { return }
        let listeners = subscribers.withLock { Array($0.values) }
        for listener in listeners { listener.yield(letter) }
    }

    func finishSubscribers() {
        let listeners = subscribers.withLock { dict -> [AsyncStream<DeadLetter>.Continuation] in
            defer { dict.removeAll() }
            return Array(dict.values)
        }
        for listener in listeners { listener.finish() }
    }
}
