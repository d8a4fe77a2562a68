// SystemHookPoint — a debug-only test hook armed for one actor system.

#if DEBUG
import MNScheduler

/// Debug builds only: a pause point of the runtime armed for one actor system. While armed,
/// every pass through the point on that system runs the action on the passing thread;
/// passes on other systems do nothing. Any thread.
final class SystemHookPoint: Sendable {
    private let armed = Lock<(system: ObjectIdentifier, action: @Sendable () -> Void)?>(nil)

    /// Every later pass on `system` runs `action`, until `disarm()`.
    func arm(_ system: ActorSystem, _ action: @escaping @Sendable () -> Void) {
        armed.withLock { $0 = (ObjectIdentifier(system), action) }
    }

    func disarm() { armed.withLock { $0 = nil } }

    /// Runs the action if the point is armed for `system` (outside the point's lock).
    func fire(for system: ActorSystem) {
        let id = ObjectIdentifier(system)
        let action = armed.withLock { armed in armed?.system == id ? armed?.action : nil }
        action?()
    }
}
#endif
