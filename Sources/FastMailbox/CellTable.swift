// CellTable: the registry's set of live cells. An open-addressing hash table of
// (id, retained cell) pairs with linear probing and a power-of-two capacity.
//
// An id's home slot: Fibonacci hashing of id / 4, times 4, plus id mod 4. Ids come from a
// process-wide counter, so four consecutive spawns share one cache line of slots, while
// groups of four still spread over the table.
//
// Not thread-safe: every access is under the system's registry lock, which orders
// everything. Invariants:
//   (T1) a cell is in the table at most once: `insert` runs once per cell, and `remove`
//        reports whether it was there.
//   (T2) every entry is reachable from its home by probing forward without crossing an
//        empty slot (id 0; ids start at 1). Removal keeps this by backward-shift deletion.
//   (T3) count ≤ 3/4 of the slots; an insert that would pass it doubles the table first.
//        Removal never shrinks it: halving doubles the local density, and shutdown's
//        removals in slot order leave survivors packed at one end, one long run. Only
//        removeAll goes back to the smallest table.
//   (T4) each stored cell holds the owner's retain (ScheduledUnit.swift, "Lifetime").
//        insert takes it and sets the owner bit before spawn can schedule the cell, so its
//        run-queue entries hold none. remove and removeAll give it up with `ownerLeaves`:
//        released here if the cell was idle, else handed to whoever holds the cell.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

final class CellTable {
    struct Slot {
        var id: UInt64  // 0: empty
        var cell: Unmanaged<AnyActorCell>?
    }

    /// log2 of the smallest table (16 slots).
    static let minimumBits = 4

    private var slots: UnsafeMutablePointer<Slot>
    /// log2 of the slot count.
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

    /// Zeroed slots from calloc, freed with `free`: an empty slot is all zero bits, so
    /// nothing is written here. A large table comes from fresh pages the kernel zeroes as
    /// they are touched.
    private static func allocateSlots(_ capacity: Int) -> UnsafeMutablePointer<Slot> {
        guard let raw = calloc(capacity, MemoryLayout<Slot>.stride) else {
            fatalError("CellTable: could not allocate \(capacity) slots (out of memory)")
        }
        return raw.bindMemory(to: Slot.self, capacity: capacity)
    }

    private static func freeSlots(_ slots: UnsafeMutablePointer<Slot>) { free(slots) }

    /// The group of four slots of `id / 4` (Fibonacci hashing: the top `bits − 2` bits of
    /// (id / 4) × 2⁶⁴/φ), and in it slot `id mod 4` (see the file comment).
    @inline(__always) private func home(_ id: UInt64) -> Int { CellTable.home(id, bits: bits) }

    /// `home(id)` in a table of 2^`bits` slots (bits ≥ minimumBits: the shift is below 64).
    @inline(__always) private static func home(_ id: UInt64, bits: Int) -> Int {
        let group = ((id &>> 2) &* 0x9E37_79B9_7F4A_7C15) &>> UInt64(truncatingIfNeeded: 64 &- (bits &- 2))
        return Int(truncatingIfNeeded: group &<< 2 | (id & 3))
    }

    /// `home(id)` (test hook).
    func homeSlot(of id: ActorID) -> Int { home(id.rawValue) }

    /// Adds `cell` (not already present, T1; never scheduled yet) and retains it as its
    /// owner (T4). Inlined into the registration; `resize` stays out of line.
    @inline(__always)
    func insert(_ cell: AnyActorCell) {
        // Wrapping arithmetic: count < capacity ≤ 2^62 (no overflow checks to pay for).
        if (count &+ 1) &* 4 > capacity &* 3 { resize(bits: bits &+ 1) }
        place(Slot(id: cell.id.rawValue, cell: Unmanaged.passRetained(cell)))
        cell.ownerArrives()
        count &+= 1
    }

    /// Gives up the owner's retain of a cell taken out of the table (T4).
    @inline(__always) private static func leave(_ cell: Unmanaged<AnyActorCell>) {
        if cell._withUnsafeGuaranteedRef({ $0.ownerLeaves() }) { cell.release() }  // idle: ours to release
    }

    @inline(__always) private func place(_ slot: Slot) { CellTable.place(slot, in: slots, bits: bits) }

    /// Puts `slot` at its home in a table of 2^`bits` slots at `slots`, or the first empty
    /// slot after it (the table's pointer and geometry in locals, not reloaded per probe).
    @inline(__always) private static func place(_ slot: Slot, in slots: UnsafeMutablePointer<Slot>, bits: Int) {
        let mask = (1 &<< bits) &- 1
        var index = home(slot.id, bits: bits)
        while slots[index].id != 0 { index = (index &+ 1) & mask }
        slots[index] = slot
    }

    /// Removes `cell` and gives up its retain (T4); false when it was not in the table.
    func remove(_ cell: AnyActorCell) -> Bool {
        let id = cell.id.rawValue
        var index = home(id)
        while true {
            let slot = slots[index]
            if slot.id == 0 { return false }
            if slot.id == id { break }
            index = (index + 1) & mask
        }
        let removed = slots[index].cell
        // Backward-shift deletion (T2): walk the rest of the run; an entry whose home is
        // not cyclically in (hole, j] may move back into the hole.
        var hole = index
        var j = (index + 1) & mask
        while slots[j].id != 0 {
            let distanceFromHome = (j - home(slots[j].id)) & mask
            if distanceFromHome >= (j - hole) & mask {
                slots[hole] = slots[j]
                hole = j
            }
            j = (j + 1) & mask
        }
        slots[hole] = Slot(id: 0, cell: nil)
        count -= 1
        if let removed { CellTable.leave(removed) }
        return true
    }

    /// Every cell in the table (retained by the array).
    var values: [AnyActorCell] {
        // Not for an empty table: Array(unsafeUninitializedCapacity: 0) writes the count
        // into the shared empty-array storage, a benign race TSan reports.
        guard count > 0 else { return [] }
        return Array(unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<capacity where slots[index].id != 0 {
                (buffer.baseAddress! + initialized).initialize(to: slots[index].cell.unsafelyUnwrapped.takeUnretainedValue())
                initialized += 1
            }
        }
    }

    /// Calls `body` with the cells in slots `start..<start + limit` and returns the slot to
    /// go on from, nil once past the last. Each chunk runs under the registry lock, so
    /// spawns wait for one chunk at most. A resize between chunks may make a walk visit
    /// some cells twice or miss some; a statistics pass must use `forEach(_:)`.
    func forEach(from start: Int, limit: Int, _ body: (AnyActorCell) -> Void) -> Int? {
        let end = min(start + limit, capacity)
        guard start < end else { return nil }
        for index in start..<end where slots[index].id != 0 {
            slots[index].cell.unsafelyUnwrapped._withUnsafeGuaranteedRef { body($0) }
        }
        return end < capacity ? end : nil
    }

    /// Calls `body` with every cell in the table, in slot order.
    func forEach(_ body: (AnyActorCell) -> Void) {
        for index in 0..<capacity where slots[index].id != 0 {
            slots[index].cell.unsafelyUnwrapped._withUnsafeGuaranteedRef { body($0) }
        }
    }

    /// Empties the table, giving up every cell's retain (T4), and goes back to the minimum
    /// capacity.
    func removeAll() {
        for index in 0..<capacity where slots[index].id != 0 {
            let cell = slots[index].cell
            slots[index] = Slot(id: 0, cell: nil)
            if let cell { CellTable.leave(cell) }
        }
        count = 0
        if bits != CellTable.minimumBits {
            CellTable.freeSlots(slots)
            bits = CellTable.minimumBits
            slots = CellTable.allocateSlots(capacity)
        }
    }

    // MARK: test hooks

    /// T2 and the count hold; returns the largest distance of an entry from its home
    /// (the longest probe a look-up can take), or nil when an invariant is broken.
    func checkedMaxDisplacement() -> Int? {
        var found = 0, longest = 0
        for index in 0..<capacity where slots[index].id != 0 {
            found += 1
            let start = home(slots[index].id)
            var probe = start
            while probe != index {
                if slots[probe].id == 0 { return nil }  // an empty slot between home and entry
                probe = (probe + 1) & mask
            }
            longest = Swift.max(longest, (index - start) & mask)
        }
        return found == count && count * 4 <= capacity * 3 ? longest : nil
    }

    /// Doubles the table (T3): each group g of four homes becomes group 2g or 2g + 1, so
    /// runs only get shorter.
    @inline(never)
    private func resize(bits newBits: Int) {
        let old = slots
        let oldCapacity = capacity
        let fresh = CellTable.allocateSlots(1 &<< newBits)
        for index in 0..<oldCapacity where old[index].id != 0 { CellTable.place(old[index], in: fresh, bits: newBits) }
        bits = newBits
        slots = fresh
        CellTable.freeSlots(old)
    }
}
