import CConcurrencyKit

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
