import FastMailbox

enum MailboxBenchmarks {
    static func run(_ options: BenchOptions) -> [BenchTable] { [] }
}
