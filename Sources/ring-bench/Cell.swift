import MNScheduler

/// One measured configuration: a workload's row, a runtime and a worker count.
struct Cell: Hashable, Codable, Sendable {
    var workload: Workload
    var variant: Variant
    var runtime: Runtime
    var workers: Int
    /// Operations per run (see `Workload.size`).
    var size: Int
    /// `--capacity` when given (mailbox ring slots, actor mailbox capacity, Go channel buffer).
    var capacity: Int?

    /// Runs the cell once: the Go peer in its own process, Swift and Dispatch cells with
    /// fewer workers than CPUs allowed in a pinned child (see PinnedChild), the rest here.
    /// Every outcome carries CPUs busy (CPUMeter): a child's from RUSAGE_CHILDREN, unless
    /// the child (a pinned ring-bench) measured itself.
    func run() -> RunOutcome {
        if runtime == .go { return CPUMeter.measure(children: true) { GoPeer.run(self) } }
        if !runtime.hasSettableWorkers, workers < CPUAvailability.current().usableCPUs {
            return CPUMeter.measure(children: true) { PinnedChild.run(self) }
        }
        return runInProcess()
    }

    /// Runs the cell in this process, measuring CPUs busy over the whole cell.
    func runInProcess() -> RunOutcome { CPUMeter.measure { runWorkload() } }

    private func runWorkload() -> RunOutcome {
        switch workload {
        case .ring: return RingWorkload.run(self)
        case .mailbox: return MailboxWorkload.run(self)
        case .pingpong: return PingPongWorkload.run(self)
        case .threadring: return ThreadRingWorkload.run(self)
        case .fanin: return FanInWorkload.run(self)
        case .spawn: return SpawnWorkload.run(self)
        case .parallel: return ParallelWorkload.run(self)
        case .blocking: return BlockingWorkload.run(self)
        case .ask: return AskWorkload.run(self)
        case .skynet: return SkynetWorkload.run(self)
        case .chameneos: return ChameneosWorkload.run(self)
        case .yield: return YieldWorkload.run(self)
        }
    }
}
