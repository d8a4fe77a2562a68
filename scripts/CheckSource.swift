// The checker behind scripts/check-source.sh, which compiles it with swiftc and documents
// the rules. Arguments: [--report] --paths P... --scan S... [--symbols DIR] [--no-unused]
//   --paths   files or folders whose findings count (the enforced scope);
//   --scan    folders whose Swift files count as references for the unused-declaration scan;
//   --symbols folder of symbol graphs (*.symbols.json) for the documentation rule (repeatable).
// Prints `file:line: rule: message` per finding and a summary per rule and per folder.
// Exit status: 1 when a finding exists and --report is absent, else 0.
import Foundation

// MARK: Findings

struct Finding {
    let file: String
    let line: Int
    let rule: String
    let message: String
}

var findings: [Finding] = []

func report(_ file: String, _ line: Int, _ rule: String, _ message: String) {
    findings.append(Finding(file: file, line: line, rule: rule, message: message))
}

// MARK: Lexing

/// One file split into its comment lines and its code with comments removed and string
/// contents blanked (interpolations stay code).
struct Lexed {
    var comments: [(line: Int, text: String)] = []
    /// The text of string literals that name a test or suite: `@Suite("…")`, `@Test("…")`.
    var testNames: [(line: Int, text: String)] = []
    var code: [Character] = []
    /// The number of leading lines that are blank or comment.
    var headerLines = 0
}

func lex(_ text: String, nestedBlocks: Bool) -> Lexed {
    let chars = Array(text)
    var out = Lexed()
    var i = 0
    var line = 1
    var comment = ""
    var commentLine = 1
    var lineHasCode = false
    var firstCodeLine = 0

    func flushComment() {
        if !comment.isEmpty { out.comments.append((commentLine, comment)) }
        comment = ""
    }
    // Modes: code, string(hashes, multiline), with a stack for interpolations.
    enum Mode { case code(parens: Int), string(hashes: Int, multi: Bool) }
    var stack: [Mode] = [.code(parens: 0)]
    var blockDepth = 0
    var lineComment = false
    var naming = false
    var nameText = ""
    var nameLine = 0

    func newline() {
        if lineComment || blockDepth > 0 { flushComment() }
        if lineHasCode && firstCodeLine == 0 { firstCodeLine = line }
        lineComment = false
        line += 1
        commentLine = line
        lineHasCode = false
    }

    while i < chars.count {
        let c = chars[i]
        let next: Character? = i + 1 < chars.count ? chars[i + 1] : nil
        if c == "\n" {
            newline()
            out.code.append("\n")
            i += 1
            continue
        }
        if lineComment {
            comment.append(c); i += 1; continue
        }
        if blockDepth > 0 {
            if c == "*" && next == "/" {
                blockDepth -= 1; i += 2
                if blockDepth == 0 { flushComment() } else { comment += "*/" }
                continue
            }
            if nestedBlocks && c == "/" && next == "*" { blockDepth += 1; comment += "/*"; i += 2; continue }
            comment.append(c); i += 1
            continue
        }
        switch stack.last! {
        case .code(let parens):
            if c == "/" && next == "/" {
                lineComment = true; commentLine = line; i += 2; continue
            }
            if c == "/" && next == "*" {
                blockDepth = 1; commentLine = line; i += 2; continue
            }
            if !c.isWhitespace { lineHasCode = true }
            // A string opens: count leading #s of a raw string.
            var j = i
            var hashes = 0
            while j < chars.count && chars[j] == "#" { hashes += 1; j += 1 }
            if j < chars.count && chars[j] == "\"" {
                let multi = j + 2 < chars.count && chars[j + 1] == "\"" && chars[j + 2] == "\""
                let width = (j - i) + (multi ? 3 : 1)
                let before = String(out.code.suffix(16)).filter { !$0.isWhitespace }
                naming = before.hasSuffix("@Suite(") || before.hasSuffix("@Test(")
                nameText = ""
                nameLine = line
                out.code.append(contentsOf: Array(repeating: " ", count: width - 1))
                out.code.append("\"")
                stack.append(.string(hashes: hashes, multi: multi))
                i += width
                continue
            }
            if c == "(" { stack[stack.count - 1] = .code(parens: parens + 1) }
            if c == ")" {
                if parens == 0 && stack.count > 1 {
                    stack.removeLast()  // back into the string
                    out.code.append(")"); i += 1; continue
                }
                stack[stack.count - 1] = .code(parens: max(0, parens - 1))
            }
            out.code.append(c); i += 1
        case .string(let hashes, let multi):
            lineHasCode = true
            if c == "\\" {
                // An escape: \( opens an interpolation (raw strings need \#().
                var j = i + 1
                var h = 0
                while j < chars.count && chars[j] == "#" && h < hashes { h += 1; j += 1 }
                if h == hashes && j < chars.count && chars[j] == "(" {
                    out.code.append(contentsOf: " " as String)
                    out.code.append("(")
                    stack.append(.code(parens: 0))
                    i = j + 1
                    continue
                }
                if hashes == 0 { out.code.append(" "); out.code.append(" "); i += 2; continue }
            }
            if c == "\"" {
                let closeLen = multi ? 3 : 1
                var ok = true
                for k in 0..<closeLen where i + k >= chars.count || chars[i + k] != "\"" { ok = false }
                if ok {
                    var h = 0
                    while h < hashes && i + closeLen + h < chars.count && chars[i + closeLen + h] == "#" { h += 1 }
                    if h == hashes {
                        if naming { out.testNames.append((nameLine, nameText)); naming = false }
                        stack.removeLast()
                        out.code.append("\"")
                        out.code.append(contentsOf: Array(repeating: " ", count: closeLen - 1 + hashes))
                        i += closeLen + hashes
                        continue
                    }
                }
            }
            if naming { nameText.append(c) }
            out.code.append(" ")
            i += 1
        }
    }
    flushComment()
    if lineHasCode && firstCodeLine == 0 { firstCodeLine = line }
    let limit = firstCodeLine == 0 ? Int.max : firstCodeLine
    out.headerLines = out.comments.last { $0.line < limit }?.line ?? 0
    return out
}

// MARK: Text rules

func regex(_ pattern: String, caseInsensitive: Bool = true) -> NSRegularExpression {
    var options: NSRegularExpression.Options = []
    if caseInsensitive { options.insert(.caseInsensitive) }
    return try! NSRegularExpression(pattern: pattern, options: options)
}

let num = #"\d[\d,]*(?:\.\d+)?"#
let numRange = "\(num)(?:\\s*[–-]\\s*\(num))?"
let approx = #"(?:~|≈|about|around|roughly|approx\.?|approximately|nearly|almost|some)\s*"#

let issueRules: [NSRegularExpression] = [
    regex(#"\b(?:issues?|PR|pull request|bug|ticket)\s*#?\d+"#),
    regex(#"(?:^|[\s(\[,;:])#\d+\b"#),
    regex(#"/(?:issues|pull)/\d+"#),
]
let months = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\\.?"
let dateRules: [NSRegularExpression] = [
    regex(#"\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?:-\d\d)?\b"#),
    regex("\\b\(months)\\s+(?:\\d{1,2}(?:st|nd|rd|th)?,?\\s+)?(?:19|20)\\d\\d\\b", caseInsensitive: false),
    regex("\\b\\d{1,2}\\s+\(months)\\s+(?:19|20)\\d\\d\\b", caseInsensitive: false),
    regex(#"\b\d{1,2}/\d{1,2}/(?:19|20)\d\d\b"#),
    regex(#"\b(?:as of|since|until|early|late|mid)[- ](?:19|20)\d\d\b"#),
]
let roundRules: [NSRegularExpression] = [
    regex(#"\bround\s+(?:\d+|`[^`]+`|"[^"]+")"#),
    regex(#"\b(?:defect|finding)\s+#?\d+"#),
]
let sizeUnit = #"(?:bytes?|B|KB|kB|KiB|MB|MiB|GB|GiB)"#
let figureRules: [(NSRegularExpression, String)] = [
    (regex("\(num)\\s*[-]?\\s*(?:(?:more|fewer|extra|additional|less)\\s+)?(?:instructions?|instrs?|insns?|cycles?|uops|µops)\\b"), "an instruction or cycle count"),
    (regex("(\(num))(\\s*-\\s*|\\s+)(?:(?:more|fewer|extra|additional|less)\\s+)?\(sizeUnit)\\b", caseInsensitive: false), "a byte count"),
    (regex("\(approx)\(numRange)\\s*(?:ns|µs|μs|us|ms|s|sec|secs|seconds?|nanoseconds?|microseconds?|milliseconds?|minutes?)\\b"), "an approximate time"),
    (regex("\(numRange)\\s*(?:ns|µs|μs|us|ms|s|nanoseconds?|microseconds?|milliseconds?)\\s*(?:/|per|a|an|each)\\s+(?:message|msg|send|op|operation|call|turn|tell|ask|round trip|spawn|actor|iteration)"), "a time per operation"),
    (regex("\\d+\\.\\d+\\s?[x×](?![\\w])"), "a ratio"),
    (regex("\\b\\d+[x×]\\s+(?:faster|slower|more|less|fewer|better|worse|higher|lower|the (?:speed|throughput|time|rate|cost))\\b"), "a ratio"),
    (regex("\(numRange)\\s*(?:%|percent\\b)"), "a percentage"),
    (regex("\(num)\\s*[kKMG]?\\s*(?:msgs?|messages|ops|operations|tells|asks|sends|requests|req)\\s*(?:/\\s*s(?:ec)?|per second)\\b"), "a throughput"),
]

/// Sizes that are powers of two are structure (word sizes, alignment, cache lines,
/// pages), not measurements: "8-byte mark", "a 64-byte cache line", "4 KiB pages".
func isStructuralSize(_ text: String) -> Bool {
    let digits = text.replacingOccurrences(of: ",", with: "")
    guard let n = Int(digits), n > 0 else { return false }
    return n & (n - 1) == 0
}

func matches(_ re: NSRegularExpression, _ s: String) -> [NSTextCheckingResult] {
    re.matches(in: s, range: NSRange(s.startIndex..., in: s))
}

func substring(_ s: String, _ r: NSRange) -> String {
    guard r.location != NSNotFound, let range = Range(r, in: s) else { return "" }
    return String(s[range])
}

func checkComment(_ file: String, _ line: Int, _ text: String, figures: Bool, names: Bool = false) {
    var seen: [NSRange] = []
    for re in issueRules {
        for m in matches(re, text) where !seen.contains(where: { NSIntersectionRange($0, m.range).length > 0 }) {
            seen.append(m.range)
            report(file, line, "issue-reference", "'\(substring(text, m.range).trimmingCharacters(in: .whitespaces))': history lives in git")
        }
    }
    for re in dateRules {
        for m in matches(re, text) { report(file, line, "date", "'\(substring(text, m.range))': history lives in git") }
    }
    guard figures || names else { return }
    for re in roundRules {
        for m in matches(re, text) { report(file, line, "round-name", "'\(substring(text, m.range))': name what is true, not when") }
    }
    guard figures else { return }
    for (re, what) in figureRules {
        for m in matches(re, text) {
            if what == "a byte count" {
                let n = substring(text, m.range(at: 1))
                if isStructuralSize(n) { continue }
                // A limit is a rule, not a measurement: "at most 15 bytes", "cut to 7 bytes".
                let before = substring(text, NSRange(location: 0, length: m.range.location)).lowercased()
                if ["at most", "up to", "maximum", "limit of", "limited to", "cut to", "truncated to", "≤", "<="].contains(where: { before.hasSuffix($0 + " ") || before.hasSuffix($0) }) { continue }
            }
            report(file, line, "measured-figure", "'\(substring(text, m.range))' reads as \(what): figures live in generated results")
        }
    }
}

// MARK: Files

let fm = FileManager.default

func files(under path: String, extensions: Set<String>) -> [String] {
    var isDir: ObjCBool = false
    guard fm.fileExists(atPath: path, isDirectory: &isDir) else { return [] }
    if !isDir.boolValue { return extensions.contains((path as NSString).pathExtension) ? [path] : [] }
    var out: [String] = []
    if let e = fm.enumerator(atPath: path) {
        for case let rel as String in e {
            if rel.hasPrefix(".build") || rel.contains("/.build") { continue }
            if extensions.contains((rel as NSString).pathExtension) {
                out.append((path as NSString).appendingPathComponent(rel))
            }
        }
    }
    return out.sorted()
}

// MARK: Unused declarations

struct Token { let text: String; let line: Int }

func tokens(_ code: [Character]) -> [Token] {
    var out: [Token] = []
    var i = 0
    var line = 1
    func isIdent(_ c: Character) -> Bool { c == "_" || c.isLetter || c.isNumber }
    while i < code.count {
        let c = code[i]
        if c == "\n" { out.append(Token(text: "\n", line: line)); line += 1; i += 1; continue }
        if c.isWhitespace { i += 1; continue }
        if c == "`" {
            var j = i + 1
            while j < code.count && code[j] != "`" && code[j] != "\n" { j += 1 }
            out.append(Token(text: String(code[(i + 1)..<j]), line: line)); i = j + 1; continue
        }
        if c == "@" || c == "#" || isIdent(c) {
            var j = i + 1
            while j < code.count && isIdent(code[j]) { j += 1 }
            var text = String(code[i..<j])
            // private(set), nonisolated(unsafe), @attribute(arguments): one token.
            let absorbs = c == "@" || ["private", "fileprivate", "internal", "public", "package", "open", "nonisolated", "unowned"].contains(text)
            if absorbs && j < code.count && code[j] == "(" {
                var depth = 0
                var k = j
                while k < code.count {
                    if code[k] == "(" { depth += 1 }
                    if code[k] == ")" { depth -= 1; if depth == 0 { break } }
                    if code[k] == "\n" { line += 1 }
                    k += 1
                }
                if c == "@" || k - j < 12 {
                    text += String(code[j...min(k, code.count - 1)]).filter { $0 != "\n" }
                    j = k + 1
                }
            }
            out.append(Token(text: text, line: line)); i = j; continue
        }
        out.append(Token(text: String(c), line: line)); i += 1
    }
    return out
}

struct Declaration {
    let name: String
    let file: String
    let line: Int
    let kind: String
    let fileScoped: Bool  // private or fileprivate
}

let modifiers: Set<String> = [
    "public", "private", "fileprivate", "internal", "open", "package", "static", "class", "final",
    "override", "mutating", "nonmutating", "lazy", "weak", "unowned", "nonisolated", "isolated",
    "distributed", "convenience", "required", "dynamic", "indirect", "prefix", "postfix", "infix",
    "consuming", "borrowing", "__consuming", "optional",
]
let declKeywords: Set<String> = ["func", "var", "let", "case", "struct", "class", "enum", "typealias", "actor", "protocol", "associatedtype"]
let typeKeywords: Set<String> = ["struct", "class", "enum", "actor", "protocol", "extension"]
/// Requirements of protocols outside this package (the standard library, Distributed,
/// Foundation, swift-log, swift-metrics, swift-service-lifecycle, ArgumentParser) that a
/// type implements and the runtime calls by conformance, not by name: never "unused".
let witnessNames: Set<String> = [
    "description", "debugDescription", "hash", "hashValue", "encode", "makeIterator", "next",
    "makeAsyncIterator", "run", "validate", "configuration", "enqueue", "asUnownedSerialExecutor",
    "asUnownedTaskExecutor", "checkIsolated", "isIsolatingCurrentContext", "isMainExecutor",
    "isSameExclusiveExecutionContext", "unownedExecutor", "shared", "main", "startIndex", "endIndex",
    "index", "errorDescription", "failureReason", "resolve", "assignID", "actorReady", "resignID",
    "makeInvocationEncoder", "remoteCall", "remoteCallVoid", "executeDistributedTarget",
    "recordGenericSubstitution", "recordArgument", "recordReturnType", "recordErrorType",
    "doneRecording", "decodeGenericSubstitutions", "decodeNextArgument", "decodeErrorType",
    "decodeReturnType", "onReturn", "onReturnVoid", "onThrow", "ActorID", "InvocationEncoder",
    "InvocationDecoder", "ResultHandler", "SerializationRequirement", "ActorSystem", "id",
    "actorSystem", "log", "metadata", "logLevel", "metadataProvider", "increment", "reset", "record",
    "recordNanoseconds", "recordSeconds", "makeCounter", "makeRecorder", "makeTimer", "makeMeter",
    "makeFloatingPointCounter", "destroyCounter", "destroyRecorder", "destroyTimer", "destroyMeter",
    "destroyFloatingPointCounter", "set", "decrement", "now", "minimumResolution", "sleep",
    "Instant", "Duration", "advanced", "duration", "rawValue", "allCases", "Element", "Index",
    "Iterator", "AsyncIterator", "Failure", "ID", "CodingKeys", "helpMessage", "defaultValueDescription",
    "allValueStrings", "mainExecutor", "defaultExecutor", "init", "deinit", "subscript", "wrappedValue", "projectedValue", "_",
]
/// Attributes whose declarations are reached by reflection or by the linker.
let reachedAttributes = ["@main", "@_cdecl", "@_silgen_name", "@objc", "@_spi", "@Option", "@Flag",
                         "@Argument", "@OptionGroup", "@_dynamicReplacement", "@TaskLocal", "@Test", "@Suite"]

let reflectiveConformances: Set<String> = [
    "Codable", "Encodable", "Decodable", "CaseIterable", "Int", "Int8", "Int16", "Int32", "Int64",
    "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "String", "Character", "Double", "Float",
]

/// Layout padding is used by its size: a stored CacheLinePadding, or a tuple of zeros.
func isPadding(_ toks: [Token], from start: Int) -> Bool {
    var j = start
    var rest: [String] = []
    while j < toks.count && toks[j].text != "\n" { rest.append(toks[j].text); j += 1 }
    if rest.contains("CacheLinePadding") { return true }
    guard let eq = rest.firstIndex(of: "=") else { return false }
    let value = rest[(eq + 1)...].filter { $0 != "(" && $0 != ")" && $0 != "," }
    return !value.isEmpty && value.allSatisfy { $0 == "0" }
}

func declarations(file: String, tokens toks: [Token]) -> [Declaration] {
    var out: [Declaration] = []
    // Context stack: what each open brace belongs to. A member declaration sits directly
    // in a type body or at file level; declarations inside bodies are locals.
    enum Ctx { case type(publicByDefault: Bool, reflective: Bool), body }
    var stack: [Ctx] = []
    var pendingBrace: Ctx? = nil
    var i = 0
    func atMemberLevel() -> Bool {
        guard let top = stack.last else { return true }
        if case .type = top { return true }
        return false
    }
    func lookBack(_ index: Int) -> [String] {
        var mods: [String] = []
        var k = index - 1
        while k >= 0 {
            let t = toks[k].text
            if t == "\n" { k -= 1; continue }
            if modifiers.contains(t) || t.hasPrefix("@") || t.hasPrefix("private(") || t.hasPrefix("fileprivate(")
                || t.hasPrefix("internal(") || t.hasPrefix("public(") || t.hasPrefix("package(") || t.hasPrefix("nonisolated(")
                || t.hasPrefix("unowned(") || t.hasPrefix("open(") {
                mods.append(t); k -= 1; continue
            }
            break
        }
        return mods
    }
    while i < toks.count {
        let t = toks[i].text
        if t == "{" {
            stack.append(pendingBrace ?? .body); pendingBrace = nil; i += 1; continue
        }
        if t == "}" { if !stack.isEmpty { stack.removeLast() }; i += 1; continue }
        guard atMemberLevel() else {
            if typeKeywords.contains(t) { pendingBrace = nil }  // a local type: its members are locals too
            i += 1; continue
        }
        // `class func`, `class var`: a modifier.
        var isDecl = declKeywords.contains(t)
        if t == "class", i + 1 < toks.count, modifiers.contains(toks[i + 1].text) || ["func", "var", "let", "subscript", "init"].contains(toks[i + 1].text) { isDecl = false }
        let mods = lookBack(i)
        let inPublicType: Bool
        let inReflective: Bool
        if case .type(let p, let r)? = stack.last { inPublicType = p; inReflective = r } else { inPublicType = false; inReflective = false }
        let isPublic = mods.contains("public") || mods.contains("open") || mods.contains { $0.hasPrefix("public(") || $0.hasPrefix("open(") }
            || (inPublicType && !mods.contains { $0.hasPrefix("private") || $0.hasPrefix("fileprivate") || $0.hasPrefix("internal") })
        let fileScoped = mods.contains { $0.hasPrefix("private") || $0.hasPrefix("fileprivate") }
        let reached = mods.contains { m in reachedAttributes.contains { m.hasPrefix($0) } } || mods.contains("override")
        if typeKeywords.contains(t) && (t != "class" || isDecl) {
            // The brace that follows opens a type body. Members of a public extension or
            // protocol are public unless marked.
            var name = ""
            if i + 1 < toks.count { name = toks[i + 1].text }
            // The inheritance clause: Codable types' stored properties and cases are used by
            // synthesized code; a raw-value or CaseIterable enum's cases by rawValue/allCases.
            var clause = Set<String>()
            var j = i + 1
            while j < toks.count && toks[j].text != "{" && toks[j].text != ";" { clause.insert(toks[j].text); j += 1 }
            let reflective = name == "CodingKeys" || !clause.isDisjoint(with: reflectiveConformances)
            let publicBody = isPublic && (t == "extension" || t == "protocol")
                || (isPublic && t == "enum")  // cases of a public enum are public
            pendingBrace = .type(publicByDefault: publicBody, reflective: reflective)
        }
        if isDecl && t != "extension" {
            var names: [String] = []
            var j = i + 1
            while j < toks.count && toks[j].text == "\n" { j += 1 }
            if t == "case" {
                // case a, b(Int), c = 1
                var depth = 0
                var expectName = true
                while j < toks.count {
                    let x = toks[j].text
                    if x == "\n" && depth == 0 { break }
                    if x == "(" { depth += 1 } else if x == ")" { depth -= 1 } else if x == "," && depth == 0 { expectName = true } else if x == "{" || x == "}" || x == ";" { break } else if expectName && depth == 0 && x != "\n" && x != "indirect" { names.append(x); expectName = false }
                    j += 1
                }
            } else if (t == "let" || t == "var") && j < toks.count && toks[j].text == "(" {
                j += 1
                while j < toks.count && toks[j].text != ")" {
                    let x = toks[j].text
                    if let f = x.first, f == "_" || f.isLetter, x != "_" { names.append(x) }
                    j += 1
                }
            } else if j < toks.count {
                names.append(toks[j].text)
            }
            for n in names {
                guard let f = n.first, f == "_" || f.isLetter else { continue }  // operators
                if isPublic || reached || witnessNames.contains(n) { continue }
                if inReflective && (t == "case" || t == "let" || t == "var") { continue }
                if (t == "let" || t == "var") && isPadding(toks, from: i + 1) { continue }
                out.append(Declaration(name: n, file: file, line: toks[i].line, kind: t, fileScoped: fileScoped))
            }
        }
        i += 1
    }
    return out
}

// MARK: Symbol graph

func checkSymbols(_ dir: String, inScope: (String) -> Bool, root: String) {
    guard let names = try? fm.contentsOfDirectory(atPath: dir) else { return }
    var seen = Set<String>()
    for name in names.sorted() where name.hasSuffix(".symbols.json") {
        guard let data = fm.contents(atPath: (dir as NSString).appendingPathComponent(name)),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let symbols = json["symbols"] as? [[String: Any]] else { continue }
        for s in symbols {
            // Synthesized members (==, hashValue, implicit initialisers) have no location.
            guard let location = s["location"] as? [String: Any],
                  let uri = location["uri"] as? String else { continue }
            let id = ((s["identifier"] as? [String: Any])?["precise"] as? String) ?? ""
            if id.contains("::SYNTHESIZED::") || seen.contains(id) { continue }
            seen.insert(id)
            if s["docComment"] != nil { continue }  // its own, or inherited from the requirement it implements
            var path = uri.hasPrefix("file://") ? String(uri.dropFirst(7)) : uri
            if path.hasPrefix(root + "/") {
                path = String(path.dropFirst(root.count + 1))
            } else if let r = path.range(of: "/Sources/", options: .backwards) {
                path = String(path[path.index(after: r.lowerBound)...])  // graphs from another checkout
            }
            guard inScope(path) else { continue }
            let line = (((location["position"] as? [String: Any])?["line"] as? Int) ?? 0) + 1
            let kind = ((s["kind"] as? [String: Any])?["displayName"] as? String) ?? "symbol"
            let title = ((s["pathComponents"] as? [String]) ?? []).joined(separator: ".")
            report(path, line, "undocumented-public", "\(kind) \(title) has no /// documentation")
        }
    }
}

// MARK: Main

var reportOnly = false
var paths: [String] = []
var scan: [String] = []
var symbolsDirs: [String] = []
var unusedScan = true
do {
    var args = Array(CommandLine.arguments.dropFirst())
    var mode = ""
    while !args.isEmpty {
        let a = args.removeFirst()
        switch a {
        case "--report": reportOnly = true
        case "--paths": mode = "paths"
        case "--scan": mode = "scan"
        case "--symbols": if !args.isEmpty { symbolsDirs.append(args.removeFirst()) }
        case "--no-unused": unusedScan = false
        default:
            if mode == "paths" { paths.append(a) } else if mode == "scan" { scan.append(a) } else {
                FileHandle.standardError.write("check-source: unknown argument \(a)\n".data(using: .utf8)!); exit(2)
            }
        }
    }
}
let root = fm.currentDirectoryPath
func normalise(_ p: String) -> String {
    var p = p
    while p.hasPrefix("./") { p = String(p.dropFirst(2)) }
    while p.hasSuffix("/") { p = String(p.dropLast()) }
    return p
}
paths = paths.map(normalise)
func inScope(_ file: String) -> Bool {
    paths.contains { file == $0 || file.hasPrefix($0 + "/") }
}

var lexedSwift: [String: Lexed] = [:]
for path in paths {
    for file in files(under: path, extensions: ["swift", "h", "c", "md"]) {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
        let ext = (file as NSString).pathExtension
        if ext == "md" {
            // DocC articles: issue numbers and dates only (figures may be documented facts).
            for (n, l) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                checkComment(file, n + 1, String(l), figures: false)
            }
            continue
        }
        let lexed = lex(text, nestedBlocks: ext == "swift")
        if ext == "swift" { lexedSwift[file] = lexed }
        for c in lexed.comments { checkComment(file, c.line, c.text, figures: true) }
        for n in lexed.testNames { checkComment(file, n.line, n.text, figures: false, names: true) }
        if lexed.headerLines > 60 {
            report(file, 1, "long-header", "the opening comment runs \(lexed.headerLines) lines (at most 60)")
        }
    }
}

for dir in symbolsDirs { checkSymbols(dir, inScope: inScope, root: root) }

if unusedScan {
    var counts: [String: Int] = [:]           // identifier -> occurrences in all scanned code
    var fileCounts: [String: [String: Int]] = [:]
    var decls: [Declaration] = []
    var scanned = Set<String>()
    for dir in scan.map(normalise) + paths {
        for file in files(under: dir, extensions: ["swift"]) where !scanned.contains(file) {
            scanned.insert(file)
            let lexed: Lexed
            if let l = lexedSwift[file] { lexed = l } else {
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
                lexed = lex(text, nestedBlocks: true)
            }
            let toks = tokens(lexed.code)
            var local: [String: Int] = [:]
            for t in toks { local[t.text, default: 0] += 1 }
            for (k, v) in local { counts[k, default: 0] += v }
            fileCounts[file] = local
            if inScope(file) { decls += declarations(file: file, tokens: toks) }
        }
    }
    // A name's declarations (any file) are not references to it.
    var declCount: [String: Int] = [:]
    var fileDeclCount: [String: [String: Int]] = [:]
    for d in decls {
        declCount[d.name, default: 0] += 1
        fileDeclCount[d.file, default: [:]][d.name, default: 0] += 1
    }
    for d in decls {
        let refs = d.fileScoped
            ? (fileCounts[d.file]?[d.name] ?? 0) - (fileDeclCount[d.file]?[d.name] ?? 0)
            : (counts[d.name] ?? 0) - (declCount[d.name] ?? 0)
        if refs <= 0 {
            report(d.file, d.line, "unused-declaration", "\(d.kind) \(d.name) is referenced nowhere")
        }
    }
}

// MARK: Output

findings.sort { ($0.file, $0.line, $0.rule) < ($1.file, $1.line, $1.rule) }
for f in findings { print("\(f.file):\(f.line): \(f.rule): \(f.message)") }
var perRule: [String: Int] = [:]
var perFolder: [String: Int] = [:]
for f in findings {
    perRule[f.rule, default: 0] += 1
    let parts = f.file.split(separator: "/")
    let folder = parts.count > 2 ? parts.prefix(2).joined(separator: "/") : parts.dropLast().joined(separator: "/")
    perFolder[folder, default: 0] += 1
}
print("check-source: \(findings.count) finding(s) in \(paths.joined(separator: " "))")
for (k, v) in perRule.sorted(by: { $0.key < $1.key }) { print("  rule \(k): \(v)") }
for (k, v) in perFolder.sorted(by: { $0.key < $1.key }) { print("  folder \(k): \(v)") }
exit(findings.isEmpty || reportOnly ? 0 : 1)
