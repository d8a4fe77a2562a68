import Foundation

/// Waits (bounded) until `condition` holds; returns whether it did.
package func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(200)
    }
    return condition()
}

/// `eventually` for async tests: it suspends between looks instead of blocking the thread,
/// so the tasks it waits for get the cooperative pool's threads.
package func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .microseconds(200))
    }
    return condition()
}
