/// A runtime that runs a workload: FastMailbox itself, or a peer it is compared with.
///
/// Which runtimes a workload supports is the workload's decision (`Workload.runtimes`);
/// a pool whose size this process cannot set (Swift's global executor, Dispatch) runs with
/// fewer workers than CPUs allowed in a child process pinned to that many CPUs (PinnedChild).
enum Runtime: String, CaseIterable, Codable, Sendable, Comparable {
    /// FastMailbox event actors (`ActorSystem.spawn`), on an MNScheduler with `workers` workers.
    case fastmailbox
    /// FastMailbox sequential actors (`spawn` with a body: a loop over an `Inbox`).
    case sequential
    /// Native Swift actors whose executor is an `MNSerialExecutor`, callers on `MNTaskExecutor`.
    case mnActor = "mn-actor"
    /// Swift's default actors on the global concurrent executor (awaited calls).
    case swift
    /// Serial DispatchQueues targeting the global concurrent queue (`async`).
    case dispatch
    /// The Go program in Benchmarks/peers/go: goroutines and channels, GOMAXPROCS = workers.
    case go
    /// Raw Concurrency Kit rings on plain threads (the `ring` and `mailbox` workloads' floor).
    case ckRing = "ck-ring"

    var title: String {
        switch self {
        case .fastmailbox: "FastMailbox"
        case .sequential: "FM sequential"
        case .mnActor: "actor on MNSerialExecutor"
        case .swift: "Swift actor"
        case .dispatch: "Dispatch"
        case .go: "Go"
        case .ckRing: "raw ck_ring"
        }
    }

    /// True when the runtime's thread count is set per cell (else: CPU affinity, see PinnedChild).
    var hasSettableWorkers: Bool {
        switch self {
        case .swift, .dispatch: false
        case .fastmailbox, .sequential, .mnActor, .go, .ckRing: true
        }
    }

    /// Chart colour, one per runtime (Okabe–Ito palette, readable by colour-blind readers).
    var colour: String {
        switch self {
        case .fastmailbox: "#0072B2"
        case .sequential: "#56B4E9"
        case .mnActor: "#009E73"
        case .swift: "#E69F00"
        case .dispatch: "#CC79A7"
        case .go: "#D55E00"
        case .ckRing: "#555555"
        }
    }

    static func < (a: Runtime, b: Runtime) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
