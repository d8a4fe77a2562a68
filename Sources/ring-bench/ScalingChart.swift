import Foundation

/// An SVG chart of one workload row over workers: one colour per runtime (with a legend),
/// the median as a point joined across worker counts, a min–max whisker per point, and the
/// reference runtime's ideal-scaling line (its fewest-workers median × workers) dashed.
/// Hand-written SVG: no dependency, readable in any browser.
struct ScalingChart {
    let workload: Workload
    let variant: Variant
    let results: [CellResult]

    /// Removes the charts an earlier run left in `directory`: every SVG file named as
    /// `fileName` names them (a workload's name, then `.svg` or `-`). Other files stay.
    static func removeCharts(in directory: String) throws {
        let fm = FileManager.default
        let names = (try? fm.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasSuffix(".svg") {
            if Workload.allCases.contains(where: { name.hasPrefix("\($0.rawValue)-") || name == "\($0.rawValue).svg" }) {
                try fm.removeItem(atPath: "\(directory)/\(name)")
            }
        }
    }

    var fileName: String {
        let slug = variant.name.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined()
        return slug.isEmpty ? "\(workload.rawValue).svg" : "\(workload.rawValue)-\(slug).svg"
    }

    private func scaled(_ v: Double) -> Double { workload.isLatency ? v / 1e3 : v / 1e6 }

    var svg: String {
        let width = 760.0, height = 420.0, left = 70.0, right = 230.0, top = 50.0, bottom = 60.0
        let plotW = width - left - right, plotH = height - top - bottom
        let ok = results.filter { $0.failure == nil && !$0.outcomes.isEmpty }
        let workerValues = Array(Set(results.map(\.cell.workers))).sorted()
        let minW = Double(workerValues.first ?? 1), maxW = Double(workerValues.last ?? 1)
        var ideal: [(Double, Double)] = []
        if !workload.isLatency, workerValues.count > 1,
           let base = ok.first(where: { $0.cell.runtime == workload.reference && Double($0.cell.workers) == minW })?.median {
            ideal = workerValues.map { (Double($0), scaled(base) * Double($0) / minW) }
        }
        let yMax = Self.niceCeiling(max((ok.compactMap(\.max).map(scaled) + ideal.map(\.1)).max() ?? 1, 1e-9) * 1.05)
        let pad = 40.0
        func x(_ w: Double) -> Double { maxW == minW ? left + plotW / 2 : left + pad + (w - minW) / (maxW - minW) * (plotW - 2 * pad) }
        func y(_ v: Double) -> Double { top + plotH - v / yMax * plotH }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        let unit = workload.isLatency ? "p50 latency, µs (lower is better)" : "M \(workload.operationName)/s (higher is better)"
        var out = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(left)" y="24" font-size="15" font-weight="bold">\(workload.rawValue)\(variant.name.isEmpty ? "" : " — " + escape(variant.name)): \(unit)</text>
        <text x="\(left)" y="40" fill="#555">median point, min–max whisker over runs; dashed: ideal scaling of \(workload.reference.title)</text>
        <line x1="\(left)" y1="\(top + plotH)" x2="\(left + plotW)" y2="\(top + plotH)" stroke="black"/>
        <line x1="\(left)" y1="\(top)" x2="\(left)" y2="\(top + plotH)" stroke="black"/>
        <text x="\(left + plotW / 2)" y="\(height - 15)" text-anchor="middle">workers (threads the runtime may use)</text>\n
        """
        for i in 0...4 {
            let v = yMax * Double(i) / 4
            out += "<line x1=\"\(left - 4)\" y1=\"\(f(y(v)))\" x2=\"\(left + plotW)\" y2=\"\(f(y(v)))\" stroke=\"#ddd\"/>"
            out += "<text x=\"\(left - 8)\" y=\"\(f(y(v) + 4))\" text-anchor=\"end\">\(Self.tickLabel(v))</text>\n"
        }
        for w in workerValues {
            out += "<text x=\"\(f(x(Double(w))))\" y=\"\(top + plotH + 18)\" text-anchor=\"middle\">\(w)</text>\n"
        }
        if !ideal.isEmpty {
            out += "<polyline fill=\"none\" stroke=\"\(workload.reference.colour)\" stroke-dasharray=\"5,4\" stroke-opacity=\"0.6\" points=\""
                + ideal.map { "\(f(x($0.0))),\(f(y($0.1)))" }.joined(separator: " ") + "\"/>\n"
        }
        let runtimes = workload.runtimes.filter { r in ok.contains { $0.cell.runtime == r } }
        for (index, runtime) in runtimes.enumerated() {
            let points = ok.filter { $0.cell.runtime == runtime }.sorted { $0.cell.workers < $1.cell.workers }
            // Offsets keep whiskers of runtimes at the same worker count apart.
            let dx = (Double(index) - Double(runtimes.count - 1) / 2) * 6
            if points.count > 1 {
                out += "<polyline fill=\"none\" stroke=\"\(runtime.colour)\" stroke-width=\"2\" points=\""
                    + points.map { "\(f(x(Double($0.cell.workers)) + dx)),\(f(y(scaled($0.median!))))" }.joined(separator: " ") + "\"/>\n"
            }
            for p in points {
                let px = x(Double(p.cell.workers)) + dx
                out += "<line x1=\"\(f(px))\" y1=\"\(f(y(scaled(p.min!))))\" x2=\"\(f(px))\" y2=\"\(f(y(scaled(p.max!))))\" stroke=\"\(runtime.colour)\" stroke-width=\"1.5\"/>"
                out += "<circle cx=\"\(f(px))\" cy=\"\(f(y(scaled(p.median!))))\" r=\"4\" fill=\"\(runtime.colour)\"/>\n"
            }
            let ly = top + 10 + Double(index) * 20
            out += "<rect x=\"\(left + plotW + 20)\" y=\"\(ly - 9)\" width=\"12\" height=\"12\" fill=\"\(runtime.colour)\"/>"
            out += "<text x=\"\(left + plotW + 38)\" y=\"\(ly + 1)\">\(escape(runtime.title))</text>\n"
        }
        return out + "</svg>\n"
    }

    /// A tick value without trailing zeros (12.5, 25, 0.25).
    static func tickLabel(_ v: Double) -> String {
        var text = String(format: "%.3f", v)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// The smallest 1, 2, 2.5 or 5 × 10^k at or above `v`, so axis ticks are round.
    static func niceCeiling(_ v: Double) -> Double {
        let magnitude = pow(10, floor(log10(v)))
        for step in [1.0, 2.0, 2.5, 5.0, 10.0] where step * magnitude >= v { return step * magnitude }
        return 10 * magnitude
    }

    private func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
