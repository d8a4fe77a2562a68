/// A value handed from one thread to another across a semaphore or latch, which orders
/// the write before the read (hence @unchecked).
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
