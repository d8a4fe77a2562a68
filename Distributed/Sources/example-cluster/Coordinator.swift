import Foundation
import Synchronization

/// One node process and the lines it printed.
final class NodeProcess: Sendable {
    let index: Int
    let process: Process
    let stdin: Pipe
    private let lines = Mutex<[String]>([])

    init(index: Int, arguments: [String]) throws {
        self.index = index
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let stdout = Pipe()
        stdin = Pipe()
        process.standardOutput = stdout
        process.standardInput = stdin
        let handle = stdout.fileHandleForReading
        try process.run()
        Thread.detachNewThread { [self] in
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    self.lines.withLock { $0.append(line) }
                    print("  [node \(index)] \(line.prefix(160))")
                }
            }
        }
    }

    func line(startingWith prefix: String) -> String? {
        lines.withLock { $0.first { $0.hasPrefix(prefix) } }
    }
}

/// Waits (bounded, polling every 20 ms: this is a program, not a test) until `condition`.
func waitFor(_ what: String, timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    if condition() { return true }
    print("timed out waiting for \(what)")
    return false
}

func coordinate(ports: [Int], victim: Int, tells: Int, calls: Int) async -> Bool {
    print("example-cluster: 3 nodes on 127.0.0.1:\(ports.map(String.init).joined(separator: ",")) over gRPC; node \(victim) will be killed")
    var nodes: [NodeProcess] = []
    defer {
        for node in nodes where node.process.isRunning { kill(node.process.processIdentifier, SIGKILL) }
    }
    do {
        for index in 1...3 {
            nodes.append(try NodeProcess(index: index, arguments: ["--node", "\(index)", "--base-port", "\(ports[0])",
                                                                     "--tells", "\(tells)", "--calls", "\(calls)"]))
        }
    } catch {
        print("cannot start the nodes: \(error)")
        return false
    }
    guard await waitFor("phase 1 on every node", timeout: .seconds(40), {
        nodes.allSatisfy { $0.line(startingWith: "PHASE1") != nil || $0.line(startingWith: "ERROR") != nil }
    }), nodes.allSatisfy({ $0.line(startingWith: "ERROR") == nil }) else { return false }
    print("phase 1 done on all nodes: killing node \(victim) (SIGKILL)")
    kill(nodes[victim - 1].process.processIdentifier, SIGKILL)
    let survivors = nodes.filter { $0.index != victim }
    guard await waitFor("the survivors' summaries", timeout: .seconds(40), {
        survivors.allSatisfy { $0.line(startingWith: "SUMMARY") != nil || $0.line(startingWith: "ERROR") != nil }
    }) else { return false }
    for node in survivors { node.stdin.fileHandleForWriting.write(Data("exit\n".utf8)) }
    var violations: [String] = []
    var summaries: [NodeSummary] = []
    for node in survivors {
        guard let line = node.line(startingWith: "SUMMARY"),
              let summary = try? JSONDecoder().decode(NodeSummary.self, from: Data(line.dropFirst("SUMMARY ".count).utf8)) else {
            violations.append("node \(node.index) printed no summary")
            continue
        }
        summaries.append(summary)
    }
    for summary in summaries {
        let n = summary.node
        if !summary.sawNodeDown.contains(victim) { violations.append("node \(n) saw no NodeDown for node \(victim)") }
        if !summary.watcherSawTerminated.contains(victim) { violations.append("node \(n): the watcher of node \(victim)'s sink got no node-down Terminated") }
        var deadLettersExpected = 0
        for peer in summary.peers {
            let pair = "node \(n) → node \(peer.peer)"
            let deadLettered = peer.tellsInDoubt + peer.tellsRefused
            deadLettersExpected += deadLettered
            print("\(pair): tells \(peer.tellsAttempted) = delivered \(peer.tellsAcknowledged) + dead-lettered \(deadLettered) (in doubt \(peer.tellsInDoubt), refused \(peer.tellsRefused)) + unacknowledged \(peer.tellsUnacknowledged); calls \(peer.callsAttempted) = answered \(peer.callsOK) + failed \(peer.callsFailed)")
            if peer.tellsAttempted != peer.tellsAcknowledged + deadLettered + peer.tellsUnacknowledged {
                violations.append("\(pair): tells sent ≠ delivered + dead-lettered")
            }
            if peer.callsAttempted != peer.callsOK + peer.callsFailed { violations.append("\(pair): calls sent ≠ answered + failed") }
            if let received = peer.received {
                print("   node \(peer.peer) counted from node \(n): tells \(received.tells), calls \(received.calls), reorders \(received.reorders)")
                if received.reorders != 0 { violations.append("\(pair): \(received.reorders) reordered") }
                if received.tells != peer.tellsAcknowledged || peer.tellsUnacknowledged != 0 || deadLettered != 0 {
                    violations.append("\(pair): receiver counted \(received.tells) tells, sender saw \(peer.tellsAcknowledged) acknowledged, \(deadLettered) dead-lettered")
                }
                if received.calls != peer.callsOK || peer.callsFailed != 0 {
                    violations.append("\(pair): receiver counted \(received.calls) calls, sender saw \(peer.callsOK) answered, \(peer.callsFailed) failed")
                }
            } else if peer.peer == victim, peer.tellsRefused == 0 && peer.tellsInDoubt == 0 && peer.callsFailed == 0 {
                violations.append("\(pair): nothing failed after the kill (was the victim killed?)")
            }
        }
        if summary.deadLetters != deadLettersExpected {
            violations.append("node \(n): \(summary.deadLetters) dead letters, expected \(deadLettersExpected) (in doubt + refused)")
        }
    }
    _ = await waitFor("the survivors to exit", timeout: .seconds(15)) { survivors.allSatisfy { !$0.process.isRunning } }
    for node in survivors where !node.process.isRunning && node.process.terminationStatus != 0 {
        violations.append("node \(node.index) exited with \(node.process.terminationStatus)")
    }
    if violations.isEmpty {
        print("example-cluster: OK — node-down seen by both survivors and their watchers, no reorder, every message accounted for")
        return true
    }
    print("example-cluster: \(violations.count) violation(s):")
    for violation in violations { print("  - \(violation)") }
    return false
}
