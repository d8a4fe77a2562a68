import Foundation

/// Runs the selected cells. For each row (workload, variant, workers) the runtimes
/// alternate run by run — FastMailbox, then each peer, `repeat` times — so a slow phase of
/// a shared machine hits them all alike. A cell whose check fails is not run again.
struct Runner {
    let workloads: [Workload]
    let runtimes: [Runtime]
    let workers: [Int]
    let producers: [Int]?
    let capacity: Int?
    let repeats: Int
    let scale: Scale

    /// ring and mailbox run on plain threads (workers mean nothing to them but Go's
    /// GOMAXPROCS), so they run once, at the largest worker count.
    func workerCounts(_ workload: Workload) -> [Int] {
        [.ring, .mailbox].contains(workload) ? [workers.max() ?? 1] : workers
    }

    /// The cells of one row, in the order they alternate.
    func row(_ workload: Workload, _ variant: Variant, workers w: Int) -> [Cell] {
        workload.runtimes.filter { runtime in
            (runtime == workload.reference || runtimes.contains(runtime)) && workload.applies(to: runtime, variant: variant)
        }.map { Cell(workload: workload, variant: variant, runtime: $0, workers: w, size: workload.size(scale), capacity: capacity) }
    }

    var rows: [[Cell]] {
        workloads.flatMap { workload in
            workload.variants(producers: producers, scale: scale).flatMap { variant in
                workerCounts(workload).map { row(workload, variant, workers: $0) }
            }
        }
    }

    /// Runs everything; `onWorkloadDone` gets each workload's results as soon as it finishes.
    func run(onWorkloadDone: ([CellResult]) -> Void) -> [CellResult] {
        let rows = self.rows
        var progress = Progress(total: rows.map { $0.count * repeats }.reduce(0, +))
        var all: [CellResult] = []
        var current: [CellResult] = []
        for row in rows {
            if let first = row.first, let last = current.last, last.cell.workload != first.workload {
                progress.clear()
                onWorkloadDone(current)
                current = []
            }
            var results = row.map { CellResult(cell: $0) }
            for run in 1...repeats {
                for index in results.indices {
                    progress.starting(results[index].cell, run: run)
                    if results[index].failure == nil { results[index].outcomes.append(results[index].cell.run()) }
                    progress.finished()
                }
            }
            current += results
            all += results
        }
        progress.clear()
        if !current.isEmpty { onWorkloadDone(current) }
        return all
    }
}
