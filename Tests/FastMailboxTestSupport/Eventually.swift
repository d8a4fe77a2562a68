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
