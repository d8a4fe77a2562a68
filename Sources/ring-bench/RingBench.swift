import Foundation

/// The command line: which tables to run, how many runs, where results go.
struct BenchOptions: Sendable {
    /// Independent runs per cell; cells report the median.
    var runs = 5
    /// Messages (or operations) per run, per producer where it says so.
    var operations = 2_000_000
    /// Tables to run, by name; empty means the default set.
    var tables: [String] = []
    /// Where CSV/JSON and charts go.
    var resultsDirectory = "Benchmarks/results"
    var printConfig = false
    /// Shorter runs for CI smoke checks.
    var quick = false
}

enum RingBench {
    static let allTables = ["mailbox", "scheduler", "actors"]

    static func usage() -> String {
        """
        usage: ring-bench [--table NAME]... [--runs N] [--ops N] [--quick] [--results DIR] [--print-config]
          tables: \(allTables.joined(separator: ", ")) (default: all)
          --runs N      runs per cell, the median is reported (default 5)
          --ops N       operations per run (default 2000000)
          --quick       small runs, for smoke tests
          --print-config  print the scheduler's effective configuration and where each value came from
        """
    }

    static func main(_ arguments: [String]) {
        var options = BenchOptions()
        var index = 1
        func value(_ flag: String) -> String {
            index += 1
            guard index < arguments.count else { fail("\(flag) needs a value") }
            return arguments[index]
        }
        func integer(_ flag: String) -> Int {
            let text = value(flag)
            guard let n = Int(text), n > 0 else { fail("\(flag) needs a positive integer, got '\(text)'") }
            return n
        }
        while index < arguments.count {
            let arg = arguments[index]
            switch arg {
            case "--table": options.tables.append(value(arg))
            case "--runs": options.runs = integer(arg)
            case "--ops": options.operations = integer(arg)
            case "--results": options.resultsDirectory = value(arg)
            case "--quick": options.quick = true; options.runs = 3; options.operations = 200_000
            case "--print-config": options.printConfig = true
            case "-h", "--help": print(usage()); exit(0)
            default: fail("unknown argument '\(arg)'\n\(usage())")
            }
            index += 1
        }
        for table in options.tables where !allTables.contains(table) {
            fail("unknown table '\(table)'; tables are \(allTables.joined(separator: ", "))")
        }
        if options.printConfig {
            printConfiguration()
            if options.tables.isEmpty { return }
        }
        let selected = options.tables.isEmpty ? allTables : options.tables
        var report = BenchReport(options: options)
        for table in selected {
            switch table {
            case "mailbox": report.add(MailboxBenchmarks.run(options))
            case "scheduler": report.add(SchedulerBenchmarks.run(options))
            case "actors": report.add(ActorBenchmarks.run(options))
            default: break
            }
        }
        report.write()
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("ring-bench: \(message)\n".utf8))
        exit(2)
    }
}
