// Scheduler+GlobalExecutor — EXPERIMENTAL: MNScheduler as the whole program's executor.
//
// Swift 6.3.1 installs a custom global executor only through
// `_createExecutors(factory:)` (SPI ExperimentalCustomExecutors), and only when it is the
// first thing a *synchronous* `@main` does (the `typealias DefaultExecutorFactory`
// spelling is ignored by this toolchain). The factory's default executor must also be a
// SchedulingExecutor, or `Task.sleep` traps: delayed jobs go to `DelayedJobTimer`, one
// thread holding a deadline-ordered list, which hands each due job to the task executor.
// The main executor stays the platform's (Dispatch main queue).
//
// Opt-in, and marked experimental because both SPIs may change in any toolchain:
//
//     @main struct App {
//         static func main() {
//             Scheduler.installAsGlobalExecutor()   // first line
//             ...
//         }
//     }

@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

extension Scheduler {
    /// EXPERIMENTAL. Makes `Scheduler.shared`'s task executor the default executor of every
    /// task in the program. Call it as the first statement of a synchronous `@main`;
    /// later calls, or calls after any task ran, are not supported by the runtime.
    public static func installAsGlobalExecutor() {
        _createExecutors(factory: MNGlobalExecutorFactory.self)
    }
}

/// EXPERIMENTAL: the ExecutorFactory behind `Scheduler.installAsGlobalExecutor()`.
/// Internal: its protocols are SPI, so they cannot appear in this module's public API.
enum MNGlobalExecutorFactory: ExecutorFactory {
    static var mainExecutor: any MainExecutor { PlatformExecutorFactory.mainExecutor }
    static var defaultExecutor: any TaskExecutor { MNGlobalDefaultExecutor.shared }
}

/// EXPERIMENTAL: `Scheduler.shared.taskExecutor` plus delayed enqueues (Task.sleep).
final class MNGlobalDefaultExecutor: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    // @unchecked: immutable references to thread-safe objects.
    static let shared = MNGlobalDefaultExecutor()

    let target: MNTaskExecutor
    let timer: DelayedJobTimer

    init() {
        target = Scheduler.shared.taskExecutor
        timer = DelayedJobTimer(target: target)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        target.enqueue(job)
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration,
                                  tolerance: C.Duration?, clock: C) {
        guard let delay = delay as? Swift.Duration else {
            fatalError("MNGlobalDefaultExecutor: clock \(C.self) has a Duration that is not Swift.Duration")
        }
        timer.add(UnownedJob(job), after: delay)
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant,
                                  tolerance: C.Duration?, clock: C) {
        enqueue(job, after: clock.now.duration(to: instant), tolerance: tolerance, clock: clock)
    }
}

/// One thread that sleeps until the earliest deadline and hands due jobs to `target`.
final class DelayedJobTimer: @unchecked Sendable {
    // @unchecked: `pending` is under its Lock; `wakeWord` is atomic.
    let target: MNTaskExecutor
    /// (deadline in CLOCK_MONOTONIC ns, job bits), sorted by deadline.
    let pending = Lock<[(UInt64, UInt)]>([])
    /// Futex word bumped when an earlier deadline arrives. Written by add (release), read
    /// by the timer thread (acquire) before it sleeps.
    let wakeWord: UnsafeMutablePointer<Atomic<UInt32>>

    init(target: MNTaskExecutor) {
        self.target = target
        wakeWord = .allocate(capacity: 1)
        wakeWord.initialize(to: Atomic(0))
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            Unmanaged<DelayedJobTimer>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(rc == 0, "DelayedJobTimer: pthread_create failed (\(rc))")
        pthread_detach(thread)
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    func add(_ job: UnownedJob, after delay: Swift.Duration) {
        let (seconds, attoseconds) = delay.components
        let ns = max(0, seconds) * 1_000_000_000 + max(0, attoseconds / 1_000_000_000)
        let deadline = DelayedJobTimer.now() + UInt64(ns)
        let bits = unsafeBitCast(job, to: UInt.self)
        let earliest = pending.withLock { list -> Bool in
            let index = list.firstIndex { $0.0 > deadline } ?? list.count
            list.insert((deadline, bits), at: index)
            return index == 0
        }
        if earliest {
            wakeWord.pointee.wrappingAdd(1, ordering: .releasing)
            _ = ckplat_wake(UnsafeMutableRawPointer(wakeWord).assumingMemoryBound(to: UInt32.self), 1)
        }
    }

    private func run() {
        let futex = UnsafeMutableRawPointer(wakeWord).assumingMemoryBound(to: UInt32.self)
        while true {
            let seen = wakeWord.pointee.load(ordering: .acquiring)
            let now = DelayedJobTimer.now()
            let (due, next) = pending.withLock { list -> ([UInt], UInt64?) in
                let split = list.firstIndex { $0.0 > now } ?? list.count
                let due = list[..<split].map { $0.1 }
                list.removeFirst(split)
                return (due, list.first?.0)
            }
            for bits in due { target.enqueue(unsafeBitCast(bits, to: UnownedJob.self)) }
            if !due.isEmpty { continue }
            let timeout = next.map { Int64($0 - now) } ?? -1
            _ = ckplat_wait(futex, seen, timeout)
        }
    }
}
