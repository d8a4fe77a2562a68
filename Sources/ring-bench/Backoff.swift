import CConcurrencyKit
import Foundation

/// Waits a little: spins first, then yields the CPU. On a 2-core machine a pure spin
/// starves the very thread it waits for (a preempted producer or consumer).
struct Backoff {
    private var spins = 0
    mutating func pause() {
        spins += 1
        if spins < 64 { ckshim_stall() } else { sched_yield(); spins = 0 }
    }
}
