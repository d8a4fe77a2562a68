// CacheLinePadding — 64 bytes of nothing, to keep one thread's hot fields off the cache
// line of another thread's.
//
// Objects made one per worker in a row (WorkerShared, Worker) may sit next to each other
// in the heap, and then two workers' per-turn stores could share a cache line (false
// sharing). A padding field before and after such fields keeps them a line away from any
// neighbour's. 64 bytes is the line on x86 and on ARM server cores; on a 128-byte-line
// core it halves the sharing rather than removing it.

/// Padding to place before and after fields written on every turn (see the file comment).
struct CacheLinePadding {
    private let words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}
