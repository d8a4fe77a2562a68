import FastMailbox

/// Scheduler table (MNScheduler issue). Placeholder until the scheduler lands.
enum SchedulerBenchmarks {
    static func run(_ options: BenchOptions) -> [BenchTable] { [] }
}

/// Prints the scheduler's effective configuration (`--print-config`).
func printConfiguration() {
    print("(scheduler configuration not available yet)")
}
