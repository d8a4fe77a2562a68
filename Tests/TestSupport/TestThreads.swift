import Foundation
import CConcurrencyKit

/// Starts `count` OS threads running `body(index)` and waits for all of them.
/// Real threads (not tasks) so producers are preempted by the kernel, as in production.
package func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// True when this test binary carries the ThreadSanitizer annotations (runs are much slower,
/// so stress tests scale their message counts down).
package let underThreadSanitizer = ckshim_tsan_enabled() != 0
