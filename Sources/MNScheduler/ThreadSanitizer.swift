// ThreadSanitizer — happens-before annotations for the edges TSan cannot see: ck_ring's
// inline assembly (annotated in ckshim.h itself) and the Swift runtime's continuations,
// whose synchronisation is not instrumented on Linux. All of them compile to nothing unless
// the build defines CKSHIM_TSAN (scripts/test.sh's TSan run does: `-Xcc -DCKSHIM_TSAN=1`).

import CConcurrencyKit

/// Happens-before release for an edge TSan cannot see, such as a value handed over
/// through a continuation the Swift runtime resumed. A no-op unless CKSHIM_TSAN.
package func threadSanitizerRelease(_ object: AnyObject) {
    ckshim_tsan_release(Unmanaged.passUnretained(object).toOpaque())
}

/// See `threadSanitizerRelease(_:)`.
package func threadSanitizerAcquire(_ object: AnyObject) {
    ckshim_tsan_acquire(Unmanaged.passUnretained(object).toOpaque())
}

/// The acquire the Swift runtime leaves out when a task awaits a continuation that was
/// already resumed. Resuming releases on the task's address, but `swift_continuation_await`
/// finding the continuation resumed goes on with no acquire, so TSan reports a race the
/// runtime's status CAS in fact orders. Call after every await on a continuation another
/// thread may resume. A no-op unless the build defines CKSHIM_TSAN.
@inlinable package func threadSanitizerAcquireCurrentTask() {
    guard ckshim_tsan_enabled() != 0 else { return }
    withUnsafeCurrentTask { task in
        // UnsafeCurrentTask is the task's one reference; the runtime releases on that address.
        if let task { ckshim_tsan_acquire(unsafeBitCast(task, to: UnsafeRawPointer.self)) }
    }
}
