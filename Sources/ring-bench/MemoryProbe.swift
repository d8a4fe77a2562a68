import CConcurrencyKit

/// Process memory readings for the spawn workload, from the platform layer.
enum MemoryProbe {
    /// Heap bytes in use (glibc: mallinfo2, every arena); 0 where the C library cannot tell.
    static func heapBytes() -> Int { Int(ckplat_heap_in_use()) }

    /// Resident set size in bytes (Linux: now; the portable layer: the peak, which never
    /// falls); 0 when unknown.
    static func residentBytes() -> Int { Int(ckplat_resident_bytes()) }
}
