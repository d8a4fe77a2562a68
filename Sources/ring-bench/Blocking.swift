import Dispatch
import FastMailbox
import MNScheduler

/// Bridges the synchronous runner to async workloads, and makes the systems cells run on.
enum Blocking {
    /// Runs `body` as a task (preferring `executor` when given) and blocks this thread
    /// until it returns. The runner's thread is never a pool thread, so this cannot deadlock.
    static func run<T: Sendable>(on executor: (any TaskExecutor)? = nil, _ body: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }

    /// An actor system with its own `workers`-worker scheduler.
    /// `detectBlocking: false` turns off MNScheduler's blocked-turn detection, so no spare
    /// thread ever joins (the allocation gate counts on one thread).
    static func system(workers: Int, detectBlocking: Bool = true) -> ActorSystem {
        var configuration = SchedulerConfiguration()
        configuration.workers = workers
        if !detectBlocking { configuration.blockingThresholdMilliseconds = 0 }
        do {
            return try ActorSystem(name: "ring-bench", configuration: configuration)
        } catch {
            RingBench.exit(withError: error)
        }
    }

    /// A bare scheduler with `workers` workers (for native actors on MNSerialExecutor).
    static func scheduler(workers: Int) -> Scheduler {
        do {
            return try Scheduler(configuration: SchedulerConfiguration(workers: workers))
        } catch {
            RingBench.exit(withError: error)
        }
    }
}
