/*
 * ckplatform_posix.h — the platform layer with POSIX threads and C11-model atomics only
 * (the API is in ckplatform.h): macOS, the BSDs, and Linux built with CKSHIM_PORTABLE=1.
 * No pinning, no CPU quota, no membarrier (the ring epoch runs its fenced mode), CPUs from
 * sysconf, the peak resident set for the current one. Where the C library offers a thread name or a heap block's size it is used;
 * everything else stands on pthread and __atomic builtins. Included only through
 * ckplatform.h.
 *
 * Waiting on an address (ckplat_wait / ckplat_wake): a fixed table of buckets, each a
 * pthread mutex and condition variable; an address hashes to one bucket.
 *   wait: lock the bucket; if *addr != expected, unlock and return EAGAIN; else wait on
 *         the bucket's condition variable (which releases the mutex atomically), unlock.
 *   wake: lock the bucket; broadcast; unlock.
 * Why no wake-up is lost (the contract in ckplatform.h): a waker changes *addr, then locks
 * the bucket. If it locks after the waiter did, the waiter is either back at EAGAIN or
 * already queued on the condition variable (it released the mutex only by waiting), so the
 * broadcast reaches it. If it locks before the waiter, its store happens before its
 * unlock, which happens before the waiter's lock, so the waiter's load sees the new value
 * (or a later one) and returns EAGAIN. Broadcast, not signal: addresses share buckets, so
 * one signal could go to a waiter on another address; every waiter rechecks its word.
 * Timeouts use CLOCK_MONOTONIC where the condition variable can (not on Darwin, which has a
 * relative timed wait instead). The mutex orders the check, nothing else: callers
 * synchronise through *addr's own atomics, as with a futex.
 */
#ifndef CKPLATFORM_POSIX_H
#define CKPLATFORM_POSIX_H

#include <unistd.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#if defined(__APPLE__)
#include <malloc/malloc.h>
#include <mach-o/dyld.h>
#include <sys/sysctl.h>
#elif defined(__GLIBC__)
#include <malloc.h>
extern int pthread_setname_np(pthread_t thread, const char *name);
#elif defined(__FreeBSD__)
#include <malloc_np.h>
#endif

static inline int ckplat_portable(void) { return 1; }

/* ---------------------------------------------------------------- waiting on an address */

#define CKPLAT_WAIT_BUCKETS 64

struct ckplat_wait_bucket {
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

/* Weak and hidden: one table per linked image, whichever object emits it (ckshim.h,
 * "current worker", has the storage rules). It needs an initializer to be a definition
 * in every object that uses it (without one, a weak reference may resolve to address 0).
 * Initialised once by ckplat__wait_init. */
struct ckplat_wait_table {
    int unused;
    struct ckplat_wait_bucket buckets[CKPLAT_WAIT_BUCKETS];
};
__attribute__((weak, visibility("hidden"))) struct ckplat_wait_table ckplat_wait_table = { 0 };
__attribute__((weak, visibility("hidden"))) pthread_once_t ckplat_wait_once = PTHREAD_ONCE_INIT;

static void ckplat__wait_init(void) {
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
#if !defined(__APPLE__)
    (void)pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
#endif
    for (int i = 0; i < CKPLAT_WAIT_BUCKETS; i++) {
        pthread_mutex_init(&ckplat_wait_table.buckets[i].lock, NULL);
        pthread_cond_init(&ckplat_wait_table.buckets[i].cond, &attributes);
    }
    pthread_condattr_destroy(&attributes);
}

static inline struct ckplat_wait_bucket *ckplat__wait_bucket(const void *addr) {
    (void)pthread_once(&ckplat_wait_once, ckplat__wait_init);
    uint64_t h = (uint64_t)(uintptr_t)addr * 0x9E3779B97F4A7C15ULL;  /* Fibonacci hashing */
    return &ckplat_wait_table.buckets[h >> 58];  /* the top 6 bits: 64 buckets */
}

static inline int ckplat_wait(uint32_t *addr, uint32_t expected, int64_t timeout_ns) {
    struct ckplat_wait_bucket *bucket = ckplat__wait_bucket(addr);
    int result = 0;
    pthread_mutex_lock(&bucket->lock);
    if (__atomic_load_n(addr, __ATOMIC_RELAXED) != expected) {
        result = EAGAIN;
    } else if (timeout_ns < 0) {
        (void)pthread_cond_wait(&bucket->cond, &bucket->lock);
    } else {
        struct timespec ts;
#if defined(__APPLE__)
        ts.tv_sec = (time_t)(timeout_ns / 1000000000LL);
        ts.tv_nsec = (long)(timeout_ns % 1000000000LL);
        int r = pthread_cond_timedwait_relative_np(&bucket->cond, &bucket->lock, &ts);
#else
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t nanoseconds = (int64_t)ts.tv_nsec + timeout_ns % 1000000000LL;
        ts.tv_sec += (time_t)(timeout_ns / 1000000000LL + nanoseconds / 1000000000LL);
        ts.tv_nsec = (long)(nanoseconds % 1000000000LL);
        int r = pthread_cond_timedwait(&bucket->cond, &bucket->lock, &ts);
#endif
        if (r == ETIMEDOUT) result = ETIMEDOUT;
    }
    pthread_mutex_unlock(&bucket->lock);
    return result;
}

/* Returns 0: how many woke is not known (a broadcast). */
static inline int ckplat_wake(uint32_t *addr, int count) {
    struct ckplat_wait_bucket *bucket = ckplat__wait_bucket(addr);
    (void)count;
    pthread_mutex_lock(&bucket->lock);
    pthread_cond_broadcast(&bucket->cond);
    pthread_mutex_unlock(&bucket->lock);
    return 0;
}

/* ---------------------------------------------------------------- membarrier */

static inline int ckplat_membarrier_register(void) { return 0; }
static inline void ckplat_membarrier(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* ---------------------------------------------------------------- threads */

/* A thread's id: drawn from a process-wide counter on its first call (ids are never
 * reused, so unique among live threads). Its name: kept here, since POSIX has no way to
 * read one back, and given to the C library too where it has pthread_setname_np. */
__attribute__((weak, visibility("hidden"))) int64_t ckplat_thread_id_counter = 0;
__attribute__((weak, visibility("hidden"), tls_model("initial-exec")))
_Thread_local int64_t ckplat_thread_id_slot = 0;
__attribute__((weak, visibility("hidden"), tls_model("initial-exec")))
_Thread_local char ckplat_thread_name_slot[16] = {0};

static inline int64_t ckplat_thread_id(void) {
    if (ckplat_thread_id_slot == 0) {
        ckplat_thread_id_slot = __atomic_add_fetch(&ckplat_thread_id_counter, 1, __ATOMIC_RELAXED);
    }
    return ckplat_thread_id_slot;
}

static inline int ckplat_set_thread_name(const char *name) {
    strncpy(ckplat_thread_name_slot, name, sizeof ckplat_thread_name_slot - 1);
    ckplat_thread_name_slot[sizeof ckplat_thread_name_slot - 1] = '\0';
#if defined(__APPLE__)
    return pthread_setname_np(ckplat_thread_name_slot);
#elif defined(__GLIBC__)
    return pthread_setname_np(pthread_self(), ckplat_thread_name_slot);
#else
    return 0;
#endif
}

static inline int ckplat_get_thread_name(char *buffer, size_t capacity) {
    if (capacity == 0) return ERANGE;
    strncpy(buffer, ckplat_thread_name_slot, capacity - 1);
    buffer[capacity - 1] = '\0';
    return 0;
}

static inline int ckplat_thread_is_runnable(int64_t tid) { (void)tid; return -1; }

/* ---------------------------------------------------------------- CPUs */

static inline int ckplat_affinity_cpu_count(void) { return -1; }
static inline int ckplat_affinity_nth_cpu(int n) { (void)n; return -1; }
static inline int ckplat_pin_current_thread(int cpu) { (void)cpu; return ENOTSUP; }

static inline int ckplat_limit_affinity(int count) { (void)count; return ENOTSUP; }

static inline int ckplat_online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

static inline int ckplat_has_cgroups(void) { return 0; }

/* No cgroups: no root, and every read fails (CPUAvailability then reports no quota). */
static inline const char *ckplat_cgroup_root(void) { return NULL; }

static inline long ckplat_read_cgroup_membership(char *buffer, size_t capacity) {
    (void)buffer; (void)capacity;
    return -1;
}

static inline long ckplat_read_cgroup_file(const char *relative, char *buffer, size_t capacity) {
    (void)relative; (void)buffer; (void)capacity;
    return -1;
}

/* ---------------------------------------------------------------- this machine, this process */

/* Darwin names the CPU through sysctl; elsewhere it is unknown here. */
static inline int ckplat_cpu_model(char *buffer, size_t capacity) {
    if (capacity == 0) return ERANGE;
#if defined(__APPLE__)
    size_t length = capacity;
    if (sysctlbyname("machdep.cpu.brand_string", buffer, &length, NULL, 0) != 0) return errno;
    buffer[capacity - 1] = '\0';
    return 0;
#else
    (void)buffer;
    return ENOTSUP;
#endif
}

/* _SC_PHYS_PAGES is not POSIX, but glibc, Darwin and the BSDs have it. */
static inline int64_t ckplat_memory_total(void) {
#if defined(_SC_PHYS_PAGES)
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (int64_t)pages * page : 0;
#else
    return 0;
#endif
}

/* POSIX has no current resident set size: this is the peak (getrusage's ru_maxrss, which
 * Darwin counts in bytes and the others in KiB). It never falls, so a growth measured with
 * it is a lower bound. */
static inline int64_t ckplat_resident_bytes(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
#if defined(__APPLE__)
    return (int64_t)usage.ru_maxrss;
#else
    return (int64_t)usage.ru_maxrss * 1024;
#endif
}

/* Bytes malloc has handed out and not taken back, 0 where the C library cannot tell. */
static inline int64_t ckplat_heap_in_use(void) {
#if defined(__APPLE__)
    return (int64_t)mstats().bytes_used;
#elif defined(__GLIBC__)
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
#else
    return 0;
#endif
}

/* Darwin's dyld knows the path; elsewhere ENOTSUP (callers fall back to argv[0]). */
static inline int ckplat_executable_path(char *buffer, size_t capacity) {
#if defined(__APPLE__)
    uint32_t size = (uint32_t)capacity;
    return _NSGetExecutablePath(buffer, &size) == 0 ? 0 : ERANGE;
#else
    (void)buffer; (void)capacity;
    return ENOTSUP;
#endif
}

/* ---------------------------------------------------------------- memory */

static inline long ckplat_page_size(void) { return sysconf(_SC_PAGESIZE); }

static inline size_t ckplat_heap_block_size(void *p) {
#if defined(__APPLE__)
    return malloc_size(p);
#elif defined(__GLIBC__) || defined(__FreeBSD__)
    return malloc_usable_size(p);
#else
    (void)p;
    return 0;
#endif
}

#endif /* CKPLATFORM_POSIX_H */
