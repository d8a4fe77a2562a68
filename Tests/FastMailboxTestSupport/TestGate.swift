import Dispatch

/// A one-shot gate a behaviour can wait on (a test controls when it opens).
package final class TestGate: Sendable {
    private let opened = DispatchSemaphore(value: 0)
    private let arrived = DispatchSemaphore(value: 0)
    package init() {}
    /// Called by the code under test: says "I am here" and waits for `open()`.
    package func pass() { arrived.signal(); opened.wait() }
    /// Waits until the code under test reached `pass()`.
    package func waitForArrival(timeout: Double = 20) -> Bool { arrived.wait(timeout: .now() + timeout) == .success }
    package func open() { opened.signal() }
}
