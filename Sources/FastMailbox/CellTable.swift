// CellTable: the registry's set of live cells. Open addressing, linear probing, a
// power-of-two capacity of one-word slots, each a retained cell or empty. A cell's home
// comes from its address: 128-byte blocks of memory, sixteen to a group; Fibonacci hashing
// places each group on 128 bytes of slots (a pair of lines), its blocks in order. Cells
// allocated one after another share those slots, so a run of spawns misses once per group.
// Nothing in the table reads a cell: inserting, probing, removing and doubling work on
// the slots' own bits.
//
// Not thread-safe: every access is under the registry lock. Invariants:
//   (T1) a cell is in the table at most once.
//   (T2) every entry is reachable from its home by probing forward without crossing an
//        empty slot; removal keeps this by backward-shift deletion.
//   (T3) count ≤ 3/4 of the slots; an insert past it doubles first. Only removeAll
//        shrinks: halving would lengthen runs.
//   (T4) each stored cell holds the owner's retain (UnitHeader.swift, "Lifetime"),
//        taken with the owner bit before spawn schedules it; remove and removeAll give it
//        up with `ownerLeaves` (released if idle, else handed to whoever holds the cell).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

final class CellTable {
    /// nil: empty.
    typealias Slot = Unmanaged<AnyActorCell>?

    /// log2 of the smallest table: two groups, so the hash keeps at least one bit.
    static let minimumBits = groupBits + 1

    private var slots: UnsafeMutablePointer<Slot>
    private var bits: Int
    private(set) var count = 0

    init() {
        bits = CellTable.minimumBits
        slots = CellTable.allocateSlots(1 << bits)
    }

    deinit {
        removeAll()
        CellTable.freeSlots(slots)
    }

    var isEmpty: Bool { count == 0 }
    private var capacity: Int { 1 &<< bits }
    private var mask: Int { capacity &- 1 }

    /// Zeroed slots from calloc: an empty slot (nil) is all zero bits.
    private static func allocateSlots(_ capacity: Int) -> UnsafeMutablePointer<Slot> {
        guard let raw = calloc(capacity, MemoryLayout<Slot>.stride) else {
            fatalError("CellTable: could not allocate \(capacity) slots (out of memory)")
        }
        return raw.bindMemory(to: Slot.self, capacity: capacity)
    }

    private static func freeSlots(_ slots: UnsafeMutablePointer<Slot>) { free(slots) }

    /// log2 of the slots in a group (128 bytes of slots).
    static let groupBits = 4

    /// log2 of the bytes in a block: no two cells start in one block (a cell's heap block
    /// is larger), so cells allocated in a row get the consecutive slots of a group.
    static let blockBits = 7

    @inline(__always) private func home(_ cell: Unmanaged<AnyActorCell>) -> Int {
        CellTable.home(address: UInt(bitPattern: cell.toOpaque()), bits: bits)
    }

    /// The home of the cell in `slot`, which is not empty.
    @inline(__always) private static func home(of slot: Slot, bits: Int) -> Int {
        home(address: UInt(bitPattern: slot.unsafelyUnwrapped.toOpaque()), bits: bits)
    }

    /// The home of a cell at `address` in a table of 2^`bits` slots (bits ≥ minimumBits):
    /// group `block / 16` by Fibonacci hashing, slot `block mod 16` in it.
    @inline(__always) static func home(address: UInt, bits: Int) -> Int {
        let block = UInt64(address) &>> UInt64(blockBits)
        let group = ((block &>> UInt64(groupBits)) &* 0x9E37_79B9_7F4A_7C15) &>> UInt64(truncatingIfNeeded: 64 &- (bits &- groupBits))
        return Int(truncatingIfNeeded: group &<< UInt64(groupBits) | (block & UInt64((1 &<< groupBits) &- 1)))
    }

    /// Adds a never-scheduled `cell` (T1) as its owner (T4).
    @inline(__always)
    func insert(_ cell: AnyActorCell) {
        // Wrapping: count < capacity ≤ 2^62.
        if (count &+ 1) &* 4 > capacity &* 3 { resize(bits: bits &+ 1) }
        let entry = Unmanaged.passRetained(cell)
        CellTable.place(entry, home: home(entry), in: slots, bits: bits)
        cell.unitHeader.ownerArrives()
        count &+= 1
    }

    /// T4.
    @inline(__always) private static func leave(_ cell: Unmanaged<AnyActorCell>) {
        if cell._withUnsafeGuaranteedRef({ $0.unitHeader.ownerLeaves() }) { cell.release() }  // idle: ours to release
    }

    /// At `home`, or the first empty slot after it.
    @inline(__always) private static func place(_ slot: Slot, home: Int, in slots: UnsafeMutablePointer<Slot>, bits: Int) {
        let mask = (1 &<< bits) &- 1
        var index = home
        while slots[index] != nil { index = (index &+ 1) & mask }
        slots[index] = slot
    }

    /// T4; false when it was not there.
    func remove(_ cell: AnyActorCell) -> Bool {
        var index = home(Unmanaged.passUnretained(cell))
        while true {
            guard let slot = slots[index] else { return false }
            if slot.toOpaque() == Unmanaged.passUnretained(cell).toOpaque() { break }
            index = (index + 1) & mask
        }
        let removed = slots[index].unsafelyUnwrapped  // the probe stopped on it
        // Backward-shift deletion (T2): an entry whose home is not cyclically in
        // (hole, j] moves back into the hole.
        var hole = index
        var j = (index + 1) & mask
        while slots[j] != nil {
            let distanceFromHome = (j - CellTable.home(of: slots[j], bits: bits)) & mask
            if distanceFromHome >= (j - hole) & mask {
                slots[hole] = slots[j]
                hole = j
            }
            j = (j + 1) & mask
        }
        slots[hole] = nil
        count -= 1
        CellTable.leave(removed)
        return true
    }

    /// Retained by the array.
    var values: [AnyActorCell] {
        // An empty table would write into shared empty-array storage (a TSan report).
        guard count > 0 else { return [] }
        return Array(unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<capacity where slots[index] != nil {
                (buffer.baseAddress! + initialized).initialize(to: slots[index].unsafelyUnwrapped.takeUnretainedValue())
                initialized += 1
            }
        }
    }

    /// The cells in slots `start..<start + limit`; returns where to go on, nil past the
    /// end. A resize between chunks may repeat or miss cells.
    func forEach(from start: Int, limit: Int, _ body: (AnyActorCell) -> Void) -> Int? {
        let end = min(start + limit, capacity)
        guard start < end else { return nil }
        for index in start..<end where slots[index] != nil {
            slots[index].unsafelyUnwrapped._withUnsafeGuaranteedRef { body($0) }
        }
        return end < capacity ? end : nil
    }

    /// In slot order.
    func forEach(_ body: (AnyActorCell) -> Void) {
        for index in 0..<capacity where slots[index] != nil {
            slots[index].unsafelyUnwrapped._withUnsafeGuaranteedRef { body($0) }
        }
    }

    /// Gives up every retain (T4), back to the minimum capacity.
    func removeAll() {
        for index in 0..<capacity {
            guard let cell = slots[index] else { continue }
            slots[index] = nil
            CellTable.leave(cell)
        }
        count = 0
        if bits != CellTable.minimumBits {
            CellTable.freeSlots(slots)
            bits = CellTable.minimumBits
            slots = CellTable.allocateSlots(capacity)
        }
    }

    // MARK: test hooks

    /// T2 and the count hold: returns the longest probe distance, nil if broken.
    func checkedMaxDisplacement() -> Int? {
        var found = 0, longest = 0
        for index in 0..<capacity where slots[index] != nil {
            found += 1
            let start = CellTable.home(of: slots[index], bits: bits)
            var probe = start
            while probe != index {
                if slots[probe] == nil { return nil }  // an empty slot between home and entry
                probe = (probe + 1) & mask
            }
            longest = Swift.max(longest, (index - start) & mask)
        }
        return found == count && count * 4 <= capacity * 3 ? longest : nil
    }

    /// Doubles the table (T3): group g becomes 2g or 2g + 1, so runs only get shorter.
    @inline(never)
    private func resize(bits newBits: Int) {
        let old = slots
        let oldCapacity = capacity
        let fresh = CellTable.allocateSlots(1 &<< newBits)
        for index in 0..<oldCapacity where old[index] != nil {
            CellTable.place(old[index], home: CellTable.home(of: old[index], bits: newBits), in: fresh, bits: newBits)
        }
        bits = newBits
        slots = fresh
        CellTable.freeSlots(old)
    }
}
