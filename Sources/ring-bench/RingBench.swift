import ArgumentParser
import FastMailbox
import Foundation
import MNScheduler

/// The ring-bench command line. Every option is order-independent (swift-argument-parser);
/// `--quick` and `--suite` pick defaults that explicit options then override.
struct RingBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ring-bench",
        abstract: "FastMailbox's benchmark suite: Savina-style workloads, side by side with Swift actors, Dispatch and Go.",
        discussion: """
        With no arguments: the headline table (\(Workload.headline.map(\.rawValue).joined(separator: ", ")) \
        at MN_WORKERS workers, else every CPU allowed; medians of 5 runs), written to .build-results/.

        Workloads (each checks its own result and prints CHECK FAILED instead of a figure when the check fails):
        \(Workload.allCases.map { "  \($0.rawValue): \($0.summary)" }.joined(separator: "\n"))

        Runtimes: fastmailbox (always; the reference), sequential, mn-actor, swift, dispatch, go (see --peers), \
        ck-ring (ring and mailbox only). Results: Markdown on stdout and in DIR/README.md, DIR/results.json \
        (schema in Benchmarks/README.md), DIR/results.csv, one SVG chart per workload row; each records the \
        scheduler configuration and the MN_ environment of the run. Charts of an earlier run in DIR are removed first.
        """,
        subcommands: [],
        helpNames: [.short, .long]
    )

    @Option(name: .customLong("workload"), help: ArgumentHelp(
        "Workloads to run, comma-separated, or 'all'. Default: the headline set (all with --suite full).",
        valueName: "list"))
    var workloadList: String?

    @Option(help: ArgumentHelp("headline: headline workloads and sizes; full: every workload, larger runs, workers 1…CPUs.", valueName: "headline|full"))
    var suite: Scale = .headline

    @Flag(help: "Small runs, 3 repeats and one worker count: a smoke test of every selected workload (CI).")
    var quick = false

    @Option(help: ArgumentHelp("Worker counts to sweep, comma-separated (e.g. 1,2). Default: MN_WORKERS when set, else CPUs allowed (1…CPUs with --suite full).", valueName: "list"))
    var workers: CommaList<Int>?

    @Option(help: ArgumentHelp("Producer/sender counts for mailbox and fanin, comma-separated. Default: mailbox 1,2,4; fanin 1,64 (1,4,16,64 with --suite full).", valueName: "list"))
    var producers: CommaList<Int>?

    @Option(help: ArgumentHelp("Ring slots for ring/mailbox (default 1024), actor mailbox capacity for FastMailbox (default \(ActorSystem.defaultMailboxCapacity)), Go channel buffer (default 1024 ring/mailbox/fanin, 256 parallel).", valueName: "n"))
    var capacity: Int?

    @Option(name: .customLong("repeat"), help: ArgumentHelp("Runs per cell; tables print the median (default 5, 3 with --quick).", valueName: "n"))
    var repeats: Int?

    @Option(help: ArgumentHelp("Peers beside FastMailbox, comma-separated: sequential, mn-actor, swift, dispatch, go, ck-ring, or 'all'. Default: all but go.", valueName: "list"))
    var peers: String?

    @Option(help: ArgumentHelp("The Go peer's binary (scripts/bench.sh --peers go builds it).", valueName: "path"))
    var goBinary = "Benchmarks/peers/go/ring-bench-go"

    @Option(help: ArgumentHelp("Directory for README.md, results.json, results.csv and the SVG charts (Benchmarks/results holds the published run).", valueName: "dir"))
    var results = ".build-results"

    @Option(help: ArgumentHelp("Append this run's row (date, commit, headline ratios) to this history file (scripts/bench.sh passes Benchmarks/results/history.md with --results Benchmarks/results).", valueName: "path"))
    var appendHistory: String?

    @Option(help: .hidden)
    var historyRowOf: String?

    @Option(help: ArgumentHelp("Also write the JSON results to this path.", valueName: "path"))
    var json: String?

    @Flag(help: "Print the scheduler's resolved configuration (each value, where it came from, its variable and range) and the MN_ environment; exits unless --workload is given.")
    var printConfig = false

    @Option(help: ArgumentHelp("Check allocations per operation against the thresholds in this file (see Benchmarks/allocation-thresholds.json); exits 1 on a regression.", valueName: "path"))
    var checkAllocations: String?

    @Option(help: .hidden)
    var runCell: String?

    mutating func validate() throws {
        if let repeats, repeats < 1 { throw ValidationError("--repeat must be at least 1") }
        if let capacity, capacity < 4 || capacity & (capacity - 1) != 0 { throw ValidationError("--capacity must be a power of two, at least 4") }
        if let workers, workers.values.contains(where: { $0 < 1 }) { throw ValidationError("--workers must be positive") }
        if let producers, producers.values.contains(where: { $0 < 1 }) { throw ValidationError("--producers must be positive") }
        _ = try selectedWorkloads()
        _ = try selectedPeers()
    }

    func selectedWorkloads() throws -> [Workload] {
        guard let workloadList else { return suite == .full ? Workload.allCases : Workload.headline }
        if workloadList == "all" { return Workload.allCases }
        guard let list = CommaList<Workload>(argument: workloadList) else {
            throw ValidationError("unknown workload in '\(workloadList)'; workloads: \(Workload.allCases.map(\.rawValue).joined(separator: ", ")), all")
        }
        return list.values
    }

    func selectedPeers() throws -> [Runtime] {
        guard let peers else { return Runtime.allCases.filter { $0 != .go } }
        if peers == "all" { return Runtime.allCases }
        guard let list = CommaList<Runtime>(argument: peers) else {
            throw ValidationError("unknown peer in '\(peers)'; peers: \(Runtime.allCases.map(\.rawValue).joined(separator: ", ")), all")
        }
        return list.values
    }

    func run() throws {
        if let runCell { PinnedChild.runHere(runCell) }
        if let historyRowOf {
            // The history row of an earlier run's results.json, printed or appended.
            let document = try JSONDecoder().decode(ResultsDocument.self, from: Data(contentsOf: URL(fileURLWithPath: historyRowOf)))
            if let appendHistory { try HistoryFile.append(document, to: appendHistory) } else { print(HistoryFile.row(document)) }
            return
        }
        let environment = ConfigurationVariable.processEnvironment()
        let resolved = try SchedulerConfiguration().resolved(environment: environment, cpus: CPUAvailability.current())
        if printConfig {
            print(resolved.description)
            if let workers { print("  (--workers \(workers.values.map(String.init).joined(separator: ",")) sets workers per cell)") }
            print("MN_ environment: \(RunConfiguration.environmentText(environment))")
            for unknown in UnknownConfigurationVariable.find(in: environment) { print("warning: \(unknown)") }
            if workloadList == nil { return }
        }
        if let checkAllocations {
            throw ExitCode(AllocationGate.check(thresholdsPath: checkAllocations) ? 0 : 1)
        }
        let allowed = CPUAvailability.current().usableCPUs
        let scale: Scale = quick ? .quick : suite
        let workerCounts: [Int]
        if let workers {
            workerCounts = workers.values
        } else if let text = environment[ConfigurationVariable.workers.name],
                  try ConfigurationVariable.workers.parse(text) != .useDefault {
            workerCounts = [resolved.workers]  // MN_WORKERS; "auto" keeps the default sweep
        } else {
            workerCounts = scale == .full ? Array(1...allowed) : [allowed]
        }
        let configuration = RunConfiguration(resolved: resolved, environment: environment, workers: workerCounts,
                                             fromCommandLine: workers != nil)
        let peers = try selectedPeers()
        GoPeer.binary = goBinary
        let runner = Runner(workloads: try selectedWorkloads(), runtimes: peers, workers: workerCounts,
                            producers: producers?.values, capacity: capacity,
                            repeats: repeats ?? (quick ? 3 : 5), scale: scale)
        let machine = MachineInfo.current(includeGo: peers.contains(.go))
        print("# ring-bench\n\n\(machine.markdown)\n\(configuration.markdown)Command: `\(commandLine)`\n")
        var markdown = ""
        let all = runner.run { workloadResults in
            guard let workload = workloadResults.first?.cell.workload else { return }
            let table = ResultsTable(workload: workload, results: workloadResults, repeats: runner.repeats).markdown
            print(table)
            fflush(nil)
            markdown += table
        }
        let settings = ResultsDocument.Settings(workloads: runner.workloads, runtimes: peers, workers: workerCounts,
                                                producers: producers?.values, capacity: capacity, repeats: runner.repeats, scale: scale)
        let document = ResultsDocument(command: CommandLine.arguments, machine: machine, settings: settings,
                                       configuration: configuration, results: all)
        try write(document, markdown: markdown, results: all, machine: machine)
        let failed = all.filter { $0.failure != nil }
        if let appendHistory, failed.isEmpty {  // a run with a failed check is no history
            try HistoryFile.append(document, to: appendHistory)
            print("history row appended to \(appendHistory)")
        }
        if !failed.isEmpty {
            // Each failure on stderr with its cell: CI shows only part of stdout's tables.
            for r in failed {
                let c = r.cell
                FileHandle.standardError.write(Data(
                    "ring-bench: CHECK FAILED: \(c.workload) \(c.variant.name) \(c.runtime) at \(c.workers) worker(s): \(r.failure ?? "")\n".utf8))
            }
            FileHandle.standardError.write(Data("ring-bench: \(failed.count) cell(s) failed their check\n".utf8))
            throw ExitCode(1)
        }
    }

    var commandLine: String {
        (["ring-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
    }

    func write(_ document: ResultsDocument, markdown: String, results all: [CellResult], machine: MachineInfo) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: results, withIntermediateDirectories: true)
        var readme = "# ring-bench results\n\n\(machine.markdown)\n\(document.configuration?.markdown ?? "")"
        readme += "Command: `\(commandLine)`. Generated \(document.generated).\n"
        readme += "Files: results.json (schema ring-bench/2), results.csv, one chart per workload row.\n\n"
        readme += markdown
        try ScalingChart.removeCharts(in: results)
        var charts: [String] = []
        for workload in document.settings.workloads {
            for variant in workload.variants(producers: document.settings.producers, scale: document.settings.scale) {
                let rowResults = all.filter { $0.cell.workload == workload && $0.cell.variant == variant }
                guard !rowResults.isEmpty else { continue }
                let chart = ScalingChart(workload: workload, variant: variant, results: rowResults)
                try chart.svg.write(toFile: "\(results)/\(chart.fileName)", atomically: true, encoding: .utf8)
                charts.append(chart.fileName)
            }
        }
        readme += "## Charts\n\n" + charts.map { "![\($0)](\($0))\n" }.joined() + "\n"
        try readme.write(toFile: "\(results)/README.md", atomically: true, encoding: .utf8)
        try document.json.write(to: URL(fileURLWithPath: "\(results)/results.json"))
        try document.csv.write(toFile: "\(results)/results.csv", atomically: true, encoding: .utf8)
        if let json { try document.json.write(to: URL(fileURLWithPath: json)) }
        print("results written to \(results)/ (README.md, results.json, results.csv, \(charts.count) charts)")
    }

    /// Exits with a message naming `error` (configuration errors while building a system).
    static func exit(withError error: any Error) -> Never {
        FileHandle.standardError.write(Data("ring-bench: \(error)\n".utf8))
        Foundation.exit(2)
    }
}

extension Scale: ExpressibleByArgument {}
