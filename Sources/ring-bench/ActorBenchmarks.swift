import FastMailbox

/// Actor-layer table (ActorSystem issue). Placeholder until the actor layer lands.
enum ActorBenchmarks {
    static func run(_ options: BenchOptions) -> [BenchTable] { [] }
}
