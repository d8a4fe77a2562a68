// RingEpoch: the grace period for ring blocks a reclaimable MPSCQueue gave back. One
// process-wide ck_epoch domain; its C parts are in ckshim.h, "ring epoch".
//
// The protocol, and why it is safe on x86-64 and AArch64, is argued in one place:
// MNScheduler.docc/RingEpoch.md. Models/ring_reclaim.pml checks the give-back with the
// grace period abstracted.
//
// Invariants:
//   (G1) A thread that may dereference a block loaded from a reclaimable queue's ringWord
//        holds a section meanwhile. Pool workers hold one while they run units; other
//        threads enter one around each access. The queue's consumer needs none.
//   (G2) A retired block is freed only after every section that could have loaded its
//        address has ended, and everything read in a section is ordered before its end.
//   (G3) The mode (fenced or asymmetric) is decided once per process, before any section,
//        retire or collection, and never changes.
//
// Orderings, in short: a section's begin stores `active`, then loads the global epoch;
// a retire's detach comes before the epoch it records. Fenced mode puts a store→load
// barrier on both sides (ck's begin; a fence after the detach). Asymmetric mode drops the
// reader's barrier and pays one membarrier per collection that hands blocks to ck.
// A section's end is a release.
//
// Sections nest. A collector holds no section of its own. A worker in one long turn holds
// the epoch back: retired blocks wait (memory, never safety).

import CConcurrencyKit

/// The ring epoch domain's Swift face (the protocol: the RingEpoch article).
@usableFromInline package enum RingEpoch {
    /// Enters a (nested) section on the calling thread.
    @inlinable package static func enter() { ckshim_epoch_enter() }

    /// Leaves the section `enter()` entered.
    @inlinable package static func exit() { ckshim_epoch_exit() }

    /// True while the calling thread is inside a section.
    @inlinable package static var isInSection: Bool { ckshim_epoch_depth() != 0 }

    /// A worker's periodic refresh: ends its section, collects, enters again (depth 1); at
    /// depth 0 it only collects.
    @inlinable package static func refresh() { ckshim_epoch_refresh() }

    /// Frees the retired ring blocks whose grace period is over and returns how many still
    /// wait. Call outside a section. `wait`: block on the reclaimer's lock rather than
    /// give up when another thread is collecting.
    @discardableResult
    package static func collect(wait: Bool = false) -> Int {
        precondition(ckshim_epoch_depth() == 0, "RingEpoch.collect inside a section would hold the epoch back")
        return Int(ckshim_epoch_collect(wait))
    }

    /// True in the asymmetric mode: sections begin without a store→load fence, and each
    /// collection that hands blocks over pays one membarrier. False in the fenced mode
    /// (the kernel refuses membarrier, or MN_RING_EPOCH is `fenced`). Decides it if unset.
    package static var isAsymmetric: Bool { ckshim_epoch_is_asymmetric() }

    /// The environment variable that chooses the mode (the article, "Choosing the mode").
    package static let environmentVariable = ConfigurationVariable.ringEpoch.name

    /// MN_RING_EPOCH's accepted values, in words (used in error messages).
    package static let allowedValues = ConfigurationVariable.ringEpoch.allowed

    /// Checks MN_RING_EPOCH in `environment` as ckshim.h's decision reads it: unset, `auto`
    /// or `fenced`, case ignored. Returns whether it asks for the fenced mode; throws for any
    /// other value, naming the variable, the value and the accepted values.
    package static func checkEnvironment(_ environment: [String: String]) throws(SchedulerConfigurationError) -> Bool {
        guard let text = environment[environmentVariable] else { return false }
        return try ConfigurationVariable.ringEpoch.parse(text) == .word("fenced")
    }

    /// Ring blocks retired and not yet freed (a snapshot).
    package static var pendingBlocks: Int { Int(ckshim_epoch_limbo_count()) }
}
