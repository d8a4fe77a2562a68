import CConcurrencyKit

/// How footprint tests sample `heapBlockSize`: malloc may hand a request a free chunk one
/// size step (16 bytes) larger that it could not split (a best fit whose remainder is too
/// small to be a chunk), so one block can overstate its object; the smallest over this many
/// objects of a kind, all alive at once, is the object's own size class. 8 was not enough:
/// once, after earlier tests had left many such chunks free, all 8 executor queues of
/// `MNDirectRunTests.idleExecutorFootprint` came out 56 bytes instead of 40.
package enum HeapSampling {
    package static let count = 256
}

/// Bytes the allocator reserved for `object`'s heap block (malloc_usable_size): what an
/// object really costs, padding included. For footprint reports and tests.
package func heapBlockSize(of object: AnyObject) -> Int {
    Int(ckshim_heap_block_size(Unmanaged.passUnretained(object).toOpaque()))
}

/// ThreadSanitizer happens-before annotations for edges TSan cannot see (no-ops unless the
/// build defines CKSHIM_TSAN): e.g. a value handed over through a continuation resumed by
/// the Swift runtime, whose own synchronisation is not instrumented on Linux.
package func threadSanitizerRelease(_ object: AnyObject) {
    ckshim_tsan_release(Unmanaged.passUnretained(object).toOpaque())
}

/// See `threadSanitizerRelease(_:)`.
package func threadSanitizerAcquire(_ object: AnyObject) {
    ckshim_tsan_acquire(Unmanaged.passUnretained(object).toOpaque())
}

/// The acquire the Swift runtime leaves out when a task awaits a continuation that was
/// already resumed. Resuming releases on the task's address (`resumeTaskAfterContinuation`:
/// `_swift_tsan_release(task)`), and a task that suspended acquires it when it runs again;
/// but `swift_continuation_await` finding the continuation resumed goes on at once, with no
/// acquire. The resumer's reads of the continuation's context (in `resume`, inlined into
/// instrumented code) then race, for TSan, with the task's next use of the same task-allocator
/// memory, though the runtime's own status CAS orders them. Call after every await on a
/// continuation that another thread may resume (ask's, a sequential actor's park). A no-op unless the build defines
/// CKSHIM_TSAN (one constant test).
@inlinable package func threadSanitizerAcquireCurrentTask() {
    guard ckshim_tsan_enabled() != 0 else { return }
    withUnsafeCurrentTask { task in
        // UnsafeCurrentTask is the task's one reference; the runtime releases on that address.
        if let task { ckshim_tsan_acquire(unsafeBitCast(task, to: UnsafeRawPointer.self)) }
    }
}
