import CConcurrencyKit

/// How many objects of a kind, all alive at once, footprint tests sample with
/// `heapBlockSize`. malloc may hand a request a free chunk one size step larger that it
/// could not split, so one block can overstate its object; the smallest over many is the
/// object's own size class.
package enum HeapSampling {
    package static let count = 256
}

/// Bytes the allocator reserved for `object`'s heap block (malloc_usable_size): what an
/// object really costs, padding included. For footprint reports and tests.
package func heapBlockSize(of object: AnyObject) -> Int {
    Int(ckplat_heap_block_size(Unmanaged.passUnretained(object).toOpaque()))
}
