import Testing
@testable import MNScheduler

/// An owner stores its MPSCQueue inline ("One object"): the queue is four words with no
/// padding, lies inside its owner's heap block, and keeps one address, its identity.
@Suite struct MPSCQueueLayoutTests {
    @Test("an MPSCQueue is four words: the ring word, five flags, the options and the shape, the first slot")
    func fourWords() {
        #expect(MemoryLayout<MPSCQueue>.size == 32)
        #expect(MemoryLayout<MPSCQueue>.alignment == 8)
    }

    @Test("a boxed queue lies inside the box's heap block, at one address across borrows")
    func inlineAndStable() throws {
        let box = try MPSCQueueBox(capacity: 8)
        let start = UInt(bitPattern: Unmanaged.passUnretained(box).toOpaque())
        let first = box.queue.hookIdentity
        #expect(first > start && first + 32 <= start + UInt(heapBlockSize(of: box)))
        _ = box.queue.enqueue(word: 1)
        let again = box.queue.hookIdentity
        #expect(again == first)
    }
}
