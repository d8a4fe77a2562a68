/*
 * ckplatform_linux.h — the platform layer on Linux (the API is in ckplatform.h). Raw
 * system calls where glibc offers no declaration Swift can use: syscall(2) is variadic, and
 * the CPU_* macros, pthread_setaffinity_np and gettid need _GNU_SOURCE, which clashes with
 * Swift's Glibc module. Included only through ckplatform.h.
 */
#ifndef CKPLATFORM_LINUX_H
#define CKPLATFORM_LINUX_H

#include <unistd.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <linux/membarrier.h>

/* glibc declares these only under _GNU_SOURCE; the prototypes are stable. */
extern int pthread_setname_np(pthread_t thread, const char *name);
extern int pthread_getname_np(pthread_t thread, char *name, size_t len);

static inline int ckplat_portable(void) { return 0; }

/* ---------------------------------------------------------------- futex */

static inline int ckplat_wait(uint32_t *addr, uint32_t expected, int64_t timeout_ns) {
    struct timespec ts, *tp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000LL);
        ts.tv_nsec = (long)(timeout_ns % 1000000000LL);
        tp = &ts;
    }
    /* The kernel compares *addr with expected and queues the caller under the futex's
     * hash-bucket lock, the lock FUTEX_WAKE takes: the contract in ckplatform.h. */
    long r = syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, tp, NULL, 0);
    return r == 0 ? 0 : errno;
}

static inline int ckplat_wake(uint32_t *addr, int count) {
    long r = syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
    return r < 0 ? 0 : (int)r;
}

/* ---------------------------------------------------------------- membarrier */

static inline int ckplat_membarrier_register(void) {
    long commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (commands < 0 || !(commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return 0;
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) return 0;
    return 1;
}

/* Cannot fail once registered: membarrier(2)'s errors are EINVAL, ENOSYS and EPERM (not
 * registered), which ckplat_membarrier_register ruled out. */
static inline void ckplat_membarrier(void) {
    (void)syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

/* ---------------------------------------------------------------- threads */

static inline int64_t ckplat_thread_id(void) { return (int64_t)syscall(SYS_gettid); }

/* Linux keeps 15 bytes + NUL (top -H, gdb and perf show it). */
static inline int ckplat_set_thread_name(const char *name) {
    char buffer[16];
    strncpy(buffer, name, sizeof buffer - 1);
    buffer[sizeof buffer - 1] = '\0';
    return pthread_setname_np(pthread_self(), buffer);
}

static inline int ckplat_get_thread_name(char *buffer, size_t capacity) {
    return pthread_getname_np(pthread_self(), buffer, capacity);
}

/* State R in /proc/self/task/TID/stat. "tid (comm) S ...": the command may hold spaces and
 * parentheses, so the state is the character after the last ") ". */
static inline int ckplat_thread_is_runnable(int64_t tid) {
    char path[64], buffer[512];
    if (tid <= 0) return -1;
    snprintf(path, sizeof path, "/proc/self/task/%lld/stat", (long long)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buffer, sizeof buffer);
    close(fd);
    if (n <= 0) return -1;
    ssize_t paren = -1;
    for (ssize_t i = 0; i < n; i++) if (buffer[i] == ')') paren = i;
    if (paren < 0 || paren + 2 >= n) return -1;
    return buffer[paren + 2] == 'R';
}

/* ---------------------------------------------------------------- CPUs */

#define CKPLAT_CPU_WORDS 64 /* 4096 CPUs */

static inline int ckplat__affinity_mask(unsigned long *mask) {
    for (int i = 0; i < CKPLAT_CPU_WORDS; i++) mask[i] = 0;
    long r = syscall(SYS_sched_getaffinity, 0, sizeof(unsigned long) * CKPLAT_CPU_WORDS, mask);
    return r < 0 ? -1 : 0;
}

static inline int ckplat_affinity_cpu_count(void) {
    unsigned long mask[CKPLAT_CPU_WORDS];
    if (ckplat__affinity_mask(mask) != 0) return -1;
    int n = 0;
    for (int i = 0; i < CKPLAT_CPU_WORDS; i++) n += __builtin_popcountl(mask[i]);
    return n;
}

static inline int ckplat_affinity_nth_cpu(int n) {
    unsigned long mask[CKPLAT_CPU_WORDS];
    if (ckplat__affinity_mask(mask) != 0) return -1;
    const int bits = (int)(sizeof(unsigned long) * 8);
    for (int cpu = 0, seen = 0; cpu < CKPLAT_CPU_WORDS * bits; cpu++) {
        if (mask[cpu / bits] & (1UL << (cpu % bits))) {
            if (seen == n) return cpu;
            seen++;
        }
    }
    return -1;
}

static inline int ckplat_pin_current_thread(int cpu) {
    unsigned long mask[CKPLAT_CPU_WORDS];
    const int bits = (int)(sizeof(unsigned long) * 8);
    if (cpu < 0 || cpu >= CKPLAT_CPU_WORDS * bits) return EINVAL;
    for (int i = 0; i < CKPLAT_CPU_WORDS; i++) mask[i] = 0;
    mask[cpu / bits] = 1UL << (cpu % bits);
    long r = syscall(SYS_sched_setaffinity, 0, sizeof(mask), mask);
    return r == 0 ? 0 : errno;
}

static inline int ckplat_online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

static inline int ckplat_has_cgroups(void) { return 1; }

/* ---------------------------------------------------------------- memory */

static inline long ckplat_page_size(void) { return sysconf(_SC_PAGESIZE); }

static inline size_t ckplat_heap_block_size(void *p) { return malloc_usable_size(p); }

#endif /* CKPLATFORM_LINUX_H */
