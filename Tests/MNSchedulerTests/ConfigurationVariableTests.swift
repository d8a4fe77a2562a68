import Foundation
import Testing
@testable import MNScheduler

@Suite struct ConfigurationVariableTests {
    @Test("the DocC Configuration article holds the table of every variable, as the descriptor table makes it")
    func articleMatchesTable() throws {
        let article = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/FastMailbox/FastMailbox.docc/Configuration.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        let table = ConfigurationVariable.markdownTable
        #expect(text.contains(table), "Configuration.md's table differs from ConfigurationVariable.all; paste:\n\(table)")
        for variable in ConfigurationVariable.all { #expect(text.contains("`\(variable.name)`")) }
    }

    @Test("every setting has its own variable in the table, named once, with the runtime's prefix")
    func tableIsComplete() {
        let names = ConfigurationVariable.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names.allSatisfy { $0.hasPrefix(ConfigurationVariable.prefix) })
        for setting in SchedulerConfiguration.Setting.allCases {
            #expect(ConfigurationVariable.named(setting.environmentVariable) == setting.variable)
            #expect(setting.variable.property == setting.rawValue)
        }
        #expect(ConfigurationVariable.all.filter { $0.property == nil } == [.ringEpoch])
    }

    @Test("each variable's default is one of its allowed values")
    func defaultsAreAllowed() throws {
        for variable in ConfigurationVariable.all {
            switch variable.defaultValue {
            case .integer(let value): #expect(variable.accepts(value), "\(variable.name)")
            case .boolean(let value): #expect(try variable.parse(String(value)) == .boolean(value))
            case .word(let word): #expect(try variable.parse(word) == .word(word))
            case .usableCPUs: #expect(variable.range?.contains(1) == true)
            }
        }
    }

    @Test("a misspelt MN_ variable is found with the closest known name; a far one lists the known names")
    func unknownVariables() {
        let environment = ["MN_WORKER": "1", "MN_THROUGHPUT": "8", "MN_TRHOUGHPUT": "3", "MN_ZZZ": "1",
                           "PATH": "/bin", "MNWORKERS": "2"]
        let unknown = UnknownConfigurationVariable.find(in: environment)
        #expect(unknown.map(\.name) == ["MN_TRHOUGHPUT", "MN_WORKER", "MN_ZZZ"])
        #expect(unknown.map { $0.closest?.name } == ["MN_THROUGHPUT", "MN_WORKERS", nil])
        #expect(unknown[1].description == "unknown environment variable MN_WORKER is ignored; did you mean MN_WORKERS?")
        #expect(unknown[2].description.contains("known: MN_WORKERS, MN_THROUGHPUT"))
        #expect(UnknownConfigurationVariable.find(in: ["MN_WORKERS": "2", "MN_RING_EPOCH": "auto"]).isEmpty)
    }

    @Test("edit distance counts insertions, deletions and substitutions")
    func editDistance() {
        func d(_ a: String, _ b: String) -> Int { UnknownConfigurationVariable.editDistance(Array(a.utf8), Array(b.utf8)) }
        #expect(d("", "") == 0)
        #expect(d("", "abc") == 3)
        #expect(d("abc", "") == 3)
        #expect(d("kitten", "sitting") == 3)
        #expect(d("MN_WORKER", "MN_WORKERS") == 1)
    }

    @Test("the process's MN_ variables are read from its environment, known or not")
    func processEnvironment() {
        setenv("MN_CONFIGURATION_TEST_PROBE", "x=1", 1)
        defer { unsetenv("MN_CONFIGURATION_TEST_PROBE") }
        let environment = ConfigurationVariable.processEnvironment()
        #expect(environment["MN_CONFIGURATION_TEST_PROBE"] == "x=1")
        #expect(environment.keys.allSatisfy { $0.hasPrefix("MN_") })
    }
}
