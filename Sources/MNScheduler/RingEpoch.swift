// RingEpoch: the grace period for ring blocks a reclaimable MPSCQueue gave back. One
// process-wide ck_epoch domain; its C parts are in ckshim.h, "ring epoch". The protocol
// and its orderings on x86-64 and AArch64: MNScheduler.docc/RingEpochProtocol.md. Model:
// Models/ring_reclaim.pml (grace period abstracted).
//
// Invariants:
//   (G1) A thread that may dereference a block loaded from a reclaimable queue's ringWord
//        holds a section meanwhile: pool workers while they run units, other threads
//        around each access. The queue's consumer needs none.
//   (G2) A retired block is freed only after every section that could have loaded its
//        address has ended, and everything read in a section is ordered before its end.
//   (G3) The mode (fenced or asymmetric) is decided once per process, before any section,
//        retire or collection, and never changes.
// Sections nest. A worker in one long turn holds the epoch back: retired blocks wait
// (memory, never safety).

import CConcurrencyKit

/// The ring epoch domain's Swift face (the protocol: the RingEpoch article).
@usableFromInline package enum RingEpoch {
    /// Enters a (nested) section on the calling thread.
    @inlinable package static func enter() { ckshim_epoch_enter() }

    /// Leaves the section `enter()` entered.
    @inlinable package static func exit() { ckshim_epoch_exit() }

    /// True while the calling thread is inside a section.
    @inlinable package static var isInSection: Bool { ckshim_epoch_depth() != 0 }

    /// A worker's refresh: ends its section, collects, enters again; at depth 0 only collects
    /// (a worker about to park). In the asymmetric mode it hands retired blocks over only in
    /// batches, so a stream of retires does not cost a membarrier per poll or per park.
    @inlinable package static func refresh() { ckshim_epoch_refresh() }

    /// The membarriers collections have issued so far (a snapshot; for tests).
    package static var membarrierCount: Int { Int(ckshim_epoch_membarrier_count()) }

    /// Pending blocks a refresh waits for before it hands them over (ckshim.h).
    package static var refreshBatch: Int { Int(CKSHIM_EPOCH_REFRESH_BATCH) }

    /// Frees the retired blocks whose grace period is over; returns how many still wait.
    /// Outside a section. `wait`: block on the reclaimer's lock instead of giving up.
    @discardableResult
    package static func collect(wait: Bool = false) -> Int {
        precondition(ckshim_epoch_depth() == 0, "RingEpoch.collect inside a section would hold the epoch back")
        return Int(ckshim_epoch_collect(wait))
    }

    /// True in the asymmetric mode (no reader fence; a membarrier per handing collection),
    /// false in the fenced mode. Decides it if unset.
    package static var isAsymmetric: Bool { ckshim_epoch_is_asymmetric() }

    /// The environment variable that chooses the mode (the article, "Choosing the mode").
    package static let environmentVariable = ConfigurationVariable.ringEpoch.name

    /// MN_RING_EPOCH's accepted values, in words (used in error messages).
    package static let allowedValues = ConfigurationVariable.ringEpoch.allowed

    /// Checks MN_RING_EPOCH in `environment` as ckshim.h reads it: whether it asks for the
    /// fenced mode; throws, naming variable, value and accepted values, for a bad value.
    package static func checkEnvironment(_ environment: [String: String]) throws(SchedulerConfigurationError) -> Bool {
        guard let text = environment[environmentVariable] else { return false }
        return try ConfigurationVariable.ringEpoch.parse(text) == .word("fenced")
    }

    /// Ring blocks retired and not yet freed (a snapshot).
    package static var pendingBlocks: Int { Int(ckshim_epoch_limbo_count()) }
}
