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
    Int(ckplat_heap_block_size(Unmanaged.passUnretained(object).toOpaque()))
}
