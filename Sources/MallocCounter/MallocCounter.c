#include "MallocCounter.h"
#include <stddef.h>
#include <errno.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define MALLOC_COUNTER_SANITIZED 1
#endif
#endif

#if !(defined(CKSHIM_TSAN) && CKSHIM_TSAN) && !defined(MALLOC_COUNTER_SANITIZED) && defined(__GLIBC__)

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static __thread uint64_t thread_allocations;
static volatile int seen_any;

static inline void count_one(void) {
    thread_allocations++;
    seen_any = 1;
}

void *malloc(size_t n) { count_one(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { count_one(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { count_one(); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { count_one(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { count_one(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    count_one();
    void *p = __libc_memalign(a, n);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

uint64_t malloc_counter_thread_allocations(void) { return thread_allocations; }
int malloc_counter_active(void) { return seen_any; }
uint64_t malloc_counter_heap_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return (uint64_t)(info.uordblks + info.hblkhd);
}

#else

uint64_t malloc_counter_thread_allocations(void) { return 0; }
int malloc_counter_active(void) { return 0; }
uint64_t malloc_counter_heap_bytes(void) { return 0; }

#endif
