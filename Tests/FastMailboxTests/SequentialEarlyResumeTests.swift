import Testing
import Dispatch
import Glibc
import Synchronization
@testable import FastMailbox
import FastMailboxTestSupport

#if DEBUG  // every test here arms a test hook, which release builds compile out

// A sequential actor's wait resumed by a sender before the body reaches its `await` (the
// wait is published inside withUnsafeContinuation's closure): the Swift runtime's fast path
// (swift_continuation_await finds the continuation resumed and goes on at once), the shape
// of the race AskEarlyResumeTests pins for `ask`. Every wait here is held at the point a
// test hook marks while a message is sent from the test's thread, and the two threads see
// each other only through relaxed atomics and sleeps. In every build the messages must
// arrive, in order, each through that path. The test covers the path's correctness, not
// park(isolation:)'s acquire of the task (threadSanitizerAcquireCurrentTask): ThreadSanitizer
// reports no race here without that acquire either, and it stays as a defence.

@Suite("Sequential wait resumed before the body awaits") struct SequentialEarlyResumeTests {
    @Test("messages that resume a published wait before its await all arrive, in order (TSan: no race)")
    func resumedBeforeAwait() throws {
        let system = try makeSystem(workers: 1)
        defer {
            SequentialSuspendTestHook.disarm()
            system.shutdown()
        }
        let count = 100
        let paused = Atomic<Int>(0)  // waits that reached the hook
        let sent = Atomic<Int>(0)    // messages sent while one was paused
        SequentialSuspendTestHook.arm(system) {
            let mine = paused.add(1, ordering: .relaxed).newValue
            // Hold the body here until the test sent the message for this wait (it resumes
            // the continuation on the test's thread), then a little longer, so the resume
            // has finished before the body goes on to its await.
            while sent.load(ordering: .relaxed) < mine, mine <= count { usleep(50) }
            usleep(500)
        }
        let received = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let ref: ActorRef<Int> = try system.spawn { inbox in
            for _ in 0..<count {
                let value = try await inbox.receive()
                received.withLock { $0.append(value) }
            }
            done.signal()
        }
        for value in 0..<count {
            // Wait until the body published its wait for this message and is held at the hook.
            while paused.load(ordering: .relaxed) <= value { usleep(50) }
            ref.tell(value)
            sent.store(value + 1, ordering: .relaxed)
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(received.withLock { $0 } == Array(0..<count))
        #expect(paused.load(ordering: .relaxed) >= count)
    }
}
#endif
