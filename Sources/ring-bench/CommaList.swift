import ArgumentParser

/// An option value written as a comma-separated list: `--workers 1,2`, `--peers swift,go`.
struct CommaList<Element: ExpressibleByArgument & Sendable>: ExpressibleByArgument, Sendable {
    var values: [Element]

    init?(argument: String) {
        var values: [Element] = []
        for part in argument.split(separator: ",", omittingEmptySubsequences: true) {
            guard let value = Element(argument: String(part.trimmingCharacters(in: .whitespaces))) else { return nil }
            values.append(value)
        }
        guard !values.isEmpty else { return nil }
        self.values = values
    }

    static var defaultCompletionKind: CompletionKind { Element.defaultCompletionKind }
}

extension Runtime: ExpressibleByArgument {}
