// UnknownConfigurationVariable — an MN_-prefixed environment variable that no entry of
// ConfigurationVariable.all names: most often a misspelling (MN_WORKER for MN_WORKERS),
// which would otherwise be ignored without a word. FastMailbox's ActorSystem logs each
// one once per process, at warning, with the closest known name.
//
// The search is a pure function of an environment dictionary, so tests need no setenv.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// An environment variable with the runtime's `MN_` prefix that the runtime does not read.
public struct UnknownConfigurationVariable: Sendable, Hashable, CustomStringConvertible {
    /// The variable's name as set.
    public let name: String
    /// The known variable whose name is closest (edit distance), nil when none is close.
    public let closest: ConfigurationVariable?

    /// An unknown variable `name`, with the known one nearest to it, if any.
    public init(name: String, closest: ConfigurationVariable?) {
        self.name = name
        self.closest = closest
    }

    /// One line: the name, and the closest known variable or the list of known ones.
    public var description: String {
        if let closest {
            return "unknown environment variable \(name) is ignored; did you mean \(closest.name)?"
        }
        return "unknown environment variable \(name) is ignored; known: "
            + ConfigurationVariable.all.map(\.name).joined(separator: ", ")
    }

    /// Every `MN_`-prefixed name in `environment` that the table does not know, sorted by name.
    public static func find(in environment: [String: String]) -> [UnknownConfigurationVariable] {
        environment.keys
            .filter { $0.hasPrefix(ConfigurationVariable.prefix) && ConfigurationVariable.named($0) == nil }
            .sorted()
            .map { UnknownConfigurationVariable(name: $0, closest: closestKnown(to: $0)) }
    }

    /// The known variable nearest to `name`, if within a third of its length in edits
    /// (at least two): far enough for a dropped or doubled letter or a swapped word part,
    /// near enough not to suggest an unrelated name.
    static func closestKnown(to name: String) -> ConfigurationVariable? {
        let scored = ConfigurationVariable.all.map { ($0, editDistance(Array(name.utf8), Array($0.name.utf8))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, best.0.name.utf8.count / 3) ? best.0 : nil
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension ConfigurationVariable {
    /// Every `MN_`-prefixed variable of this process's environment, known or not.
    public static func processEnvironment() -> [String: String] {
        var out: [String: String] = [:]
        #if canImport(Darwin)
        var entry = _NSGetEnviron().pointee!
        #else
        var entry: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = environ
        #endif
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if text.hasPrefix(prefix), let equals = text.firstIndex(of: "=") {
                out[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return out
    }
}
