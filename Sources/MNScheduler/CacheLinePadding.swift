// CacheLinePadding: 64 bytes of nothing, to keep one thread's hot fields off another's
// cache line. Objects made one per worker in a row (WorkerShared, Worker) may be heap
// neighbours; padding around their per-turn fields prevents false sharing. 64 bytes is
// the line on x86 and ARM server cores; a 128-byte line halves the sharing instead.

/// Padding to place before and after fields written on every turn.
struct CacheLinePadding {
    private let words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}
