import CConcurrencyKit
#if canImport(Glibc)
import Glibc
#endif

/// Process memory readings for the spawn workload, from the platform layer.
enum MemoryProbe {
    /// Heap bytes in use (glibc: mallinfo2, every arena); 0 where the C library cannot tell.
    static func heapBytes() -> Int { Int(ckplat_heap_in_use()) }

    /// Resident set size in bytes (Linux: now; the portable layer: the peak, which never
    /// falls); 0 when unknown.
    static func residentBytes() -> Int { Int(ckplat_resident_bytes()) }

    /// Gives the allocator's free pages back to the system (glibc: malloc_trim), so that a
    /// run's RSS growth is not hidden by pages an earlier run freed; elsewhere nothing.
    static func returnFreePages() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
    }
}
