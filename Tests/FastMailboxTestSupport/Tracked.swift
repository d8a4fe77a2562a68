import Synchronization

/// A class payload whose deinit is counted, to prove nothing leaks or is freed twice.
/// `live` counts for the whole process: a test that compares it before and after runs in a
/// `.serialized` suite that no other suite of its run shares Tracked values with.
package final class Tracked: Sendable {
    package static let live = Atomic<Int>(0)
    package let value: Int
    package init(_ value: Int) { self.value = value; Tracked.live.wrappingAdd(1, ordering: .relaxed) }
    deinit { Tracked.live.wrappingSubtract(1, ordering: .relaxed) }
}
