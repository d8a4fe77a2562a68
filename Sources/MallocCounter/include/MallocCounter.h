/*
 * MallocCounter — counts heap allocations made by the calling thread.
 *
 * Test and benchmark support only (never linked into FastMailbox or MNScheduler).
 * The target defines malloc/calloc/realloc/posix_memalign/aligned_alloc/memalign, which
 * interpose glibc's for the whole process; each bumps a thread-local counter and calls
 * glibc's __libc_* implementation. A thread-local counter keeps other threads' noise out
 * of a measurement: read it, do N operations on this thread, read it again.
 *
 * Under ThreadSanitizer (CKSHIM_TSAN) TSan owns malloc, so the interposer is compiled
 * out and malloc_counter_active() returns 0: callers must skip their assertion then.
 *
 * It stays OS-specific, outside CConcurrencyKit's platform layer, because interposing
 * malloc is: it needs glibc's __libc_* entry points (and mallinfo2 from <malloc.h>). On any
 * other C library (Darwin, musl, the BSDs) it compiles to the stubs, so it builds on every
 * platform and malloc_counter_active() says whether it counts. The portable platform layer
 * (CKSHIM_PORTABLE=1) does not change it: glibc is still there on Linux.
 */
#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H
#include <stdint.h>

/** Allocations made by the calling thread since it started. */
uint64_t malloc_counter_thread_allocations(void);
/** 1 when the interposer is compiled in and has counted at least one allocation. */
int malloc_counter_active(void);
/** Heap bytes in use, every thread and arena (glibc mallinfo2: uordblks + hblkhd, so
 *  malloc's chunk headers and rounding included); 0 when the interposer is compiled out. */
uint64_t malloc_counter_heap_bytes(void);

#endif
