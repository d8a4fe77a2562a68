/*
 * ckplatform.h — the platform layer: everything operating-system specific, behind one
 * small API of `ckplat_*` inline functions. Two implementations, chosen at compile time:
 *  - ckplatform_linux.h: futex, membarrier, gettid, sched_{get,set}affinity, /proc, cgroups;
 *  - ckplatform_posix.h: POSIX threads and C11-model atomics only (the portable mode).
 * Linux builds take the first unless CKSHIM_PORTABLE=1 (`swift build -Xcc -DCKSHIM_PORTABLE=1`);
 * every other system takes the second. No other file of the package includes an OS header
 * or calls syscall(2).
 *
 * The API (both sides; errors are errno values):
 *  ckplat_portable()                    1 in the portable implementation, else 0.
 *  ckplat_wait(addr, expected, ns)      sleeps while *addr == expected, until a
 *                                       ckplat_wake on addr, a timeout (ns < 0: none), or a
 *                                       spurious return. 0 (woken or spurious), EAGAIN
 *                                       (*addr differed), ETIMEDOUT, EINTR. Contract: the
 *                                       check of *addr and going to sleep are atomic with
 *                                       respect to ckplat_wake, so a waker that changes *addr
 *                                       and then calls ckplat_wake(addr) never leaves a
 *                                       waiter asleep that checked the old value. It orders
 *                                       no memory: callers synchronise through *addr's atomics.
 *  ckplat_wake(addr, count)             wakes up to count waiters on addr (the portable side
 *                                       may wake more: callers loop). Never reads *addr, so
 *                                       addr's memory may already be gone.
 *  ckplat_membarrier_register()         1 if ckplat_membarrier() is available from now on.
 *  ckplat_membarrier()                  a full fence on every running thread of the process.
 *  ckplat_thread_id()                   a number naming the calling thread, nonzero, unique
 *                                       among live threads (Linux: the kernel tid).
 *  ckplat_set_thread_name(name)         names the calling thread (Linux keeps at most 15 bytes).
 *  ckplat_get_thread_name(buf, cap)     the calling thread's name; 0 or an errno value.
 *  ckplat_thread_is_runnable(tid)       1 running or waiting for a CPU, 0 asleep, -1 unknown.
 *  ckplat_affinity_cpu_count()          CPUs in the affinity mask, -1 if unknown.
 *  ckplat_affinity_nth_cpu(n)           the n-th CPU of that mask, -1 if none or unknown.
 *  ckplat_pin_current_thread(cpu)       0, or an errno value (ENOTSUP: no pinning here).
 *  ckplat_online_cpus()                 CPUs online (sysconf), at least 1.
 *  ckplat_page_size()                   the page size in bytes.
 *  ckplat_heap_block_size(p)            bytes malloc reserved for p, 0 if it cannot tell.
 *  ckplat_limit_affinity(count)         keeps the first count CPUs of the calling thread's
 *                                       mask (threads it starts later inherit it); 0, or an
 *                                       errno value (ENOTSUP: no pinning here).
 *  ckplat_has_cgroups()                 1 where cgroups may hold a CPU quota.
 *  ckplat_cgroup_root()                 the cgroup mount root, NULL without cgroups.
 *  ckplat_read_cgroup_membership(b, c)  this process's cgroup list (Linux: /proc/self/cgroup)
 *                                       into b, NUL-terminated: its length, -1 if unreadable.
 *  ckplat_read_cgroup_file(rel, b, c)   the file at root + rel ("/cpu.max") likewise.
 *                                       CPUAvailability parses both; without cgroups, -1.
 *  ckplat_cpu_model(buf, cap)           the CPU's model name; 0 or an errno value.
 *  ckplat_memory_total()                physical memory in bytes, 0 if unknown.
 *  ckplat_resident_bytes()              the resident set in bytes (the portable side: its
 *                                       peak, getrusage), 0 if unknown.
 *  ckplat_heap_in_use()                 bytes malloc has handed out, 0 if it cannot tell.
 *  ckplat_executable_path(buf, cap)     this program's file; 0 or an errno value (ENOTSUP).
 */
#ifndef CKPLATFORM_H
#define CKPLATFORM_H

#include <stdint.h>
#include <stddef.h>
#include <errno.h>
#include <pthread.h>

#if defined(__linux__) && !(defined(CKSHIM_PORTABLE) && CKSHIM_PORTABLE)
#include "ckplatform_linux.h"
#else
#include "ckplatform_posix.h"
#endif

#endif /* CKPLATFORM_H */
