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

/* Linux keeps at most 15 bytes + NUL (top -H, gdb and perf show it). */
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

/* Keeps the first count CPUs of the calling thread's mask; threads it starts later inherit
 * the narrower mask (sched_setaffinity acts on the calling thread only). */
static inline int ckplat_limit_affinity(int count) {
    unsigned long mask[CKPLAT_CPU_WORDS];
    const int bits = (int)(sizeof(unsigned long) * 8);
    if (count < 1) return EINVAL;
    if (ckplat__affinity_mask(mask) != 0) return errno;
    for (int cpu = 0, kept = 0; cpu < CKPLAT_CPU_WORDS * bits; cpu++) {
        if (!(mask[cpu / bits] & (1UL << (cpu % bits)))) continue;
        if (kept < count) kept++;
        else mask[cpu / bits] &= ~(1UL << (cpu % bits));
    }
    long r = syscall(SYS_sched_setaffinity, 0, sizeof(mask), mask);
    return r == 0 ? 0 : errno;
}

static inline int ckplat_online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

static inline int ckplat_has_cgroups(void) { return 1; }

/* ---------------------------------------------------------------- files the kernel writes */

/* Up to capacity - 1 bytes of a small file, NUL-terminated: the byte count, or -1 when it
 * cannot be read. One read(2): /proc and cgroup files give their text in one go. */
static inline long ckplat__read_file(const char *path, char *buffer, size_t capacity) {
    if (capacity == 0) return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buffer, capacity - 1);
    close(fd);
    if (n < 0) return -1;
    buffer[n] = '\0';
    return (long)n;
}

/* The cgroup v1 and v2 mount root; the quota files' paths are relative to it. */
static inline const char *ckplat_cgroup_root(void) { return "/sys/fs/cgroup"; }

static inline long ckplat_read_cgroup_membership(char *buffer, size_t capacity) {
    return ckplat__read_file("/proc/self/cgroup", buffer, capacity);
}

static inline long ckplat_read_cgroup_file(const char *relative, char *buffer, size_t capacity) {
    char path[4096];
    int n = snprintf(path, sizeof path, "%s%s", ckplat_cgroup_root(), relative);
    if (n < 0 || (size_t)n >= sizeof path) return -1;
    return ckplat__read_file(path, buffer, capacity);
}

/* ---------------------------------------------------------------- this machine, this process */

/* The first "model name" line of /proc/cpuinfo (x86; other architectures may have none). */
static inline int ckplat_cpu_model(char *buffer, size_t capacity) {
    char text[8192];
    if (capacity == 0) return ERANGE;
    if (ckplat__read_file("/proc/cpuinfo", text, sizeof text) < 0) return ENOENT;
    for (char *line = text; *line; ) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        char *value = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && value) {
            value++;
            while (*value == ' ' || *value == '\t') value++;
            size_t length = strlen(value);
            while (length > 0 && (value[length - 1] == ' ' || value[length - 1] == '\t')) length--;
            if (length >= capacity) length = capacity - 1;
            memcpy(buffer, value, length);
            buffer[length] = '\0';
            return 0;
        }
        if (!end) break;
        line = end + 1;
    }
    return ENOENT;
}

/* Physical memory: /proc/meminfo's MemTotal (glibc's sysconf and it both report sysinfo(2)'s
 * total). */
static inline int64_t ckplat_memory_total(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (int64_t)pages * page : 0;
}

/* The resident set now: the second field of /proc/self/statm, in pages. */
static inline int64_t ckplat_resident_bytes(void) {
    char text[256];
    long long size = 0, resident = 0;
    if (ckplat__read_file("/proc/self/statm", text, sizeof text) < 0) return 0;
    if (sscanf(text, "%lld %lld", &size, &resident) != 2) return 0;
    return (int64_t)resident * sysconf(_SC_PAGESIZE);
}

static inline int64_t ckplat_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
}

static inline int ckplat_executable_path(char *buffer, size_t capacity) {
    if (capacity < 2) return ERANGE;
    ssize_t n = readlink("/proc/self/exe", buffer, capacity - 1);
    if (n < 0) return errno;
    if ((size_t)n == capacity - 1) return ERANGE;  /* may be cut short */
    buffer[n] = '\0';
    return 0;
}

/* ---------------------------------------------------------------- memory */

static inline long ckplat_page_size(void) { return sysconf(_SC_PAGESIZE); }

static inline size_t ckplat_heap_block_size(void *p) { return malloc_usable_size(p); }

#endif /* CKPLATFORM_LINUX_H */
