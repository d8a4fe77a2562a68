// skynet: a tree of actors, 10 children per node, `size` leaves (a power of 10); leaf i
// reports i, every node reports the sum of its children's reports and stops. Counts every
// node (1,111,111 for a million leaves) as an operation. Check: the root's sum is
// size·(size−1)/2.
import FastMailbox
import MNScheduler
import Synchronization

enum SkynetWorkload {
    /// Where the root's answer lands.
    final class Answer: Sendable {
        let value = Atomic<Int>(-1)
        let latch = Latch(1)
        func set(_ sum: Int) { value.store(sum, ordering: .releasing); latch.countDown() }
        func check(leaves: Int, finished: Bool) -> String? {
            if !finished { return "the root never reported" }
            let got = value.load(ordering: .acquiring), expected = leaves * (leaves - 1) / 2
            return got == expected ? nil : "sum \(got), expected \(expected)"
        }
    }

    /// One node: spawns 10 children (or is a leaf), adds their reports, reports and stops.
    final class Node: EventActor {
        enum Message: Sendable {
            case start(first: Int, leaves: Int, parent: ActorRef<Message>?)
            case result(Int)
        }
        let answer: Answer
        var parent: ActorRef<Message>?
        var pending = 0
        var sum = 0
        init(answer: Answer) { self.answer = answer }

        func receive(_ message: Message, context: ActorContext<Message>) throws {
            switch message {
            case .start(let first, let leaves, let parent):
                self.parent = parent
                if leaves == 1 { return report(first, context) }
                let child = leaves / 10
                pending = 10
                for i in 0..<10 {
                    let answer = self.answer
                    try context.spawn { Node(answer: answer) }.tell(.start(first: first + i * child, leaves: child, parent: context.myself))
                }
            case .result(let value):
                sum += value
                pending -= 1
                if pending == 0 { report(sum, context) }
            }
        }

        func report(_ value: Int, _ context: ActorContext<Message>) {
            if let parent { parent.tell(.result(value)) } else { answer.set(value) }
            context.stop()
        }
    }

    /// Nodes in a tree with `leaves` leaves.
    static func nodes(leaves: Int) -> Int {
        var total = 0, level = leaves
        while level >= 1 { total += level; level /= 10 }
        return total
    }

    static func run(_ cell: Cell) -> RunOutcome {
        let leaves = cell.size
        let answer = Answer()
        switch cell.runtime {
        case .fastmailbox:
            let system = Blocking.system(workers: cell.workers)
            defer { _ = system.shutdown(timeout: .seconds(60)) }
            let t0 = Clock.now()
            try! system.spawn { Node(answer: answer) }.tell(.start(first: 0, leaves: leaves, parent: nil))
            return .timed(since: t0, operations: nodes(leaves: leaves), check: answer.check(leaves: leaves, finished: answer.latch.wait()))
        case .mnActor:
            let scheduler = Blocking.scheduler(workers: cell.workers)
            defer { scheduler.shutdown() }
            return tasks(leaves: leaves, answer: answer, caller: scheduler.taskExecutor)
        case .swift:
            return tasks(leaves: leaves, answer: answer, caller: nil)
        default:
            return .failed("skynet has no \(cell.runtime) implementation")
        }
    }

    static func tasks(leaves: Int, answer: Answer, caller: (any TaskExecutor)?) -> RunOutcome {
        @Sendable func node(_ first: Int, _ leaves: Int) async -> Int {
            if leaves == 1 { return first }
            let child = leaves / 10
            return await withTaskGroup(of: Int.self) { group in
                for i in 0..<10 { group.addTask(executorPreference: caller) { await node(first + i * child, child) } }
                return await group.reduce(0, +)
            }
        }
        let t0 = Clock.now()
        let sum = Blocking.run(on: caller) { await node(0, leaves) }
        answer.set(sum)
        return .timed(since: t0, operations: nodes(leaves: leaves), check: answer.check(leaves: leaves, finished: answer.latch.wait()))
    }
}
