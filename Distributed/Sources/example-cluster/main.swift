// example-cluster — three FastMailbox nodes in three processes on 127.0.0.1, talking over
// gRPC: calls to a distributed actor and tells to an exported event actor, each with
// per-sender sequence numbers. The coordinator (this program without --node) starts the
// nodes, kills one (SIGKILL) once the first phase is done, and checks what the two
// survivors report:
//   - both saw the victim declared down (NodeDown event) and a watcher of a ref to the
//     victim's actor got Terminated with a node-down reason;
//   - no reorder in any (sender → receiver) pair, for tells and for calls;
//   - sent = delivered + dead-lettered + failed: tells attempted = acknowledged by the
//     receiver + dead-lettered here (in doubt at the link loss, or refused once down);
//     calls attempted = answered + failed; for a live receiver, what it counted equals
//     what the sender saw acknowledged and answered; each survivor's dead letters are
//     exactly its in-doubt and refused tells.
// Exits 0 when every check holds, 1 otherwise. Bounded: the whole run ends within ~60 s.
//
//   swift run example-cluster [--base-port 47101] [--tells 300] [--calls 100]
//   swift run -c release example-cluster --bench 5000   (remote ping-pong figures)

import Foundation

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    guard let at = arguments.firstIndex(of: name), at + 1 < arguments.count, let parsed = Int(arguments[at + 1]) else { return value }
    return parsed
}
let basePort = option("--base-port", default: 47101)
let tells = option("--tells", default: 300)
let calls = option("--calls", default: 100)
let ports = [basePort, basePort + 1, basePort + 2]
let victim = 3

if arguments.contains("--bench") {
    do {
        try await runBench(basePort: basePort + 10, count: option("--bench", default: 2_000))
        exit(0)
    } catch {
        print("bench failed: \(error)")
        exit(1)
    }
} else if let at = arguments.firstIndex(of: "--node"), at + 1 < arguments.count, let index = Int(arguments[at + 1]) {
    do {
        try await runNode(index: index, ports: ports, victim: victim, tellsPerPeer: tells, callsPerPeer: calls)
        exit(0)
    } catch {
        emit("ERROR node \(index): \(error)")
        exit(2)
    }
} else {
    exit(await coordinate(ports: ports, victim: victim, tells: tells, calls: calls) ? 0 : 1)
}
