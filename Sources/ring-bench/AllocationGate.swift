// The allocation gate: heap allocations per operation on FastMailbox's hot paths, checked
// against thresholds checked in at Benchmarks/allocation-thresholds.json, so a change that
// adds a malloc to a message's path fails CI. Counts only, never time: allocation counts are
// exact and repeatable on a shared machine, where wall-clock thresholds flap.
//
// MallocCounter counts the calling thread's allocations, so every measurement runs its
// whole path on one thread: a 1-worker system whose worker runs both sides (ask's caller is
// a task on that worker; spawn's parent is an actor on it), or the measuring thread itself.
import FastMailbox
import Foundation
import MallocCounter
import MNScheduler

enum AllocationGate {
    /// Operations per measurement; the per-operation figure is the count / this.
    static let operations = 20_000

    /// Allocations per operation, by benchmark name (names without spaces: the thresholds
    /// file is keyed by them).
    static func measure() -> [String: Double] {
        ["tell_receive": tellReceive(), "ask": ask(), "spawn": spawn(), "spawn_capture_free": spawnCaptureFree(),
         "spawn_value": spawnValue(), "spawn_class": spawnClass(), "mailbox_send_drain": mailboxSendDrain()]
    }

    /// Allocations per tell on the sending thread plus per received message on the worker.
    static func tellReceive() -> Double {
        let system = Blocking.system(workers: 1, detectBlocking: false)
        defer { _ = system.shutdown() }
        let latch = Latch(1)
        let box = ResultBox<(first: UInt64, last: UInt64)>()
        let actor = try! system.spawn(options: SpawnOptions(mailboxCapacity: 1024)) { (n: Int, _: ActorContext<Int>) in
            if n == 0 { box.value = (malloc_counter_thread_allocations(), 0) }
            if n == operations { box.value!.last = malloc_counter_thread_allocations(); latch.countDown() }
        }
        let before = malloc_counter_thread_allocations()
        for n in 0...operations { actor.tell(n) }
        let sender = malloc_counter_thread_allocations() - before
        latch.wait()
        let worker = box.value!.last - box.value!.first
        return Double(sender + worker) / Double(operations)
    }

    /// Allocations per ask, caller and echo actor on the one worker thread.
    static func ask() -> Double {
        let system = Blocking.system(workers: 1, detectBlocking: false)
        defer { _ = system.shutdown() }
        let echo = try! system.spawn { (request: AskWorkload.Request, _: ActorContext<AskWorkload.Request>) in
            if case .echo(let n, let replyTo) = request { replyTo.tell(n) }
        }
        let count = Blocking.run(on: system.scheduler.taskExecutor) { () async -> UInt64 in
            _ = try? await echo.ask { .echo(-1, $0) }
            let before = malloc_counter_thread_allocations()
            for n in 0..<operations { _ = try? await echo.ask { .echo(n, $0) } }
            return malloc_counter_thread_allocations() - before
        }
        return Double(count) / Double(operations)
    }

    /// Allocations per spawned actor and its first message, spawned by an actor, with a
    /// closure that captures two values (so it has a context of its own, besides the cell).
    static func spawn() -> Double {
        let probe = ChildProbe()
        return probe.measure { context, n in
            try! context.spawn { (message: Int, _: ActorContext<Int>) in
                if message == n { probe.childReceived() }
            }.tell(n)
        }
    }

    /// Counts a measurement's children down and reads the allocation counter at the last.
    final class ChildProbe: @unchecked Sendable {
        let remaining = Latch(operations)
        let done = Latch(1)
        /// Written by the parent's turn before its first spawn; read by the last child's
        /// turn on the same worker (one worker: the turns are ordered).
        var before: UInt64 = 0
        var count: UInt64 = 0

        func childReceived() {
            remaining.countDown()
            if remaining.count == 0 {
                count = malloc_counter_thread_allocations() - before
                done.countDown()
            }
        }

        /// Allocations per child: `spawnChild` spawns and tells one, from the parent's turn.
        func measure(_ spawnChild: @escaping @Sendable (ActorContext<Int>, Int) -> Void) -> Double {
            let system = Blocking.system(workers: 1, detectBlocking: false)
            defer { _ = system.shutdown(timeout: .seconds(60)) }
            let parent = try! system.spawn { (_: Int, context: ActorContext<Int>) in
                self.before = malloc_counter_thread_allocations()
                for n in 0..<operations { spawnChild(context, n) }
            }
            parent.tell(0)
            done.wait()
            return Double(count) / Double(operations)
        }
    }

    /// The probe `spawnCaptureFree`'s children reach without capturing it.
    static let captureFreeProbe = ChildProbe()

    /// Allocations per actor spawned with a closure that captures nothing, and its first
    /// message, spawned by an actor: the cell alone (its message needs no ring).
    static func spawnCaptureFree() -> Double {
        captureFreeProbe.measure { context, n in
            try! context.spawn { (_: Int, _: ActorContext<Int>) in AllocationGate.captureFreeProbe.childReceived() }.tell(n)
        }
    }

    /// A value behaviour: its state lives in the cell.
    struct ValueChild: ActorBehavior {
        let probe: ChildProbe
        var received = 0
        mutating func receive(_ message: Int, context: ActorContext<Int>) {
            received += 1
            probe.childReceived()
        }
    }

    /// Allocations per actor spawned with a value behaviour, and its first message, spawned
    /// by an actor: the cell alone.
    static func spawnValue() -> Double {
        let probe = ChildProbe()
        return probe.measure { context, n in try! context.spawn(ValueChild(probe: probe)).tell(n) }
    }

    /// A class behaviour: its instance is an object of its own.
    final class ClassChild: EventActor {
        let probe: ChildProbe
        var received = 0
        init(probe: ChildProbe) { self.probe = probe }
        func receive(_ message: Int, context: ActorContext<Int>) {
            received += 1
            probe.childReceived()
        }
    }

    /// Allocations per actor spawned with a class behaviour, and its first message, spawned
    /// by an actor: the instance and the cell (the factory captures only the probe, so it
    /// has no context of its own).
    static func spawnClass() -> Double {
        let probe = ChildProbe()
        return probe.measure { context, n in try! context.spawn { ClassChild(probe: probe) }.tell(n) }
    }

    /// Allocations per Mailbox.send + drain on one thread, the ring never full.
    static func mailboxSendDrain() -> Double {
        let mailbox = try! Mailbox<Int>(capacity: 64)
        var sink = 0
        for n in 0..<32 { _ = mailbox.send(n) }
        _ = mailbox.drain(max: 32) { sink &+= $0 }
        let before = malloc_counter_thread_allocations()
        for round in 0..<(operations / 32) {
            for n in 0..<32 { _ = mailbox.send(round &+ n) }
            _ = mailbox.drain(max: 32) { sink &+= $0 }
        }
        let count = malloc_counter_thread_allocations() - before
        withExtendedLifetime(sink) {}
        return Double(count) / Double(operations / 32 * 32)
    }

    /// Measures, prints a table and compares with the thresholds file
    /// ({"name": maximum allocations per operation}). False on any regression, on a
    /// threshold without a measurement, or when the interposer is not active.
    static func check(thresholdsPath: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: thresholdsPath),
              let thresholds = try? JSONDecoder().decode([String: Double].self, from: data) else {
            FileHandle.standardError.write(Data("ring-bench: cannot read thresholds from \(thresholdsPath)\n".utf8))
            return false
        }
        let measured = measure()
        guard malloc_counter_active() != 0 else {
            print("allocation gate: MallocCounter is not active in this build (sanitizer?); nothing checked")
            return false
        }
        var passed = true
        print("| benchmark | allocations per op | threshold | result |\n|---|---|---|---|")
        for name in Set(measured.keys).union(thresholds.keys).sorted() {
            let value = measured[name], limit = thresholds[name]
            let ok = value != nil && limit != nil && value! <= limit!
            passed = passed && ok
            print("| \(name) | \(value.map { String(format: "%.3f", $0) } ?? "not measured") | \(limit.map { String(format: "%.3f", $0) } ?? "none") | \(ok ? "ok" : "REGRESSION") |")
        }
        return passed
    }
}
