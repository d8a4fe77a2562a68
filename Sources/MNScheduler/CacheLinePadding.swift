// CacheLinePadding — 64 bytes of nothing, to keep one thread's hot fields off the cache
// line of another thread's.
//
// Swift allocates class instances with malloc (16-byte aligned) and lays out stored
// properties in declaration order. Objects made one per worker in a row (WorkerShared,
// Worker) may sit next to each other, and then worker 0's per-turn stores (its turn count,
// next slot, current unit, tick) and worker 1's can land on one cache line, which would
// move between the two cores on every turn (false sharing). A padding field before and
// after such fields keeps them at least a line away from any neighbour's. 64 bytes is the line on x86 and on the ARM server cores (Neoverse); on a
// 128-byte-line core (Apple's) it halves the sharing rather than removing it.

/// Padding to place before and after fields written on every turn (see the file comment).
struct CacheLinePadding {
    private let words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}
