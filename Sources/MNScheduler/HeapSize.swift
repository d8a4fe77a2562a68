import CConcurrencyKit

/// Bytes the allocator reserved for `object`'s heap block (malloc_usable_size): what an
/// object really costs, padding included. For footprint reports and tests.
package func heapBlockSize(of object: AnyObject) -> Int {
    Int(ckshim_heap_block_size(Unmanaged.passUnretained(object).toOpaque()))
}
