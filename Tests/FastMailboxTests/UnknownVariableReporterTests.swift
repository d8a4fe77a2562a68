import Logging
import Testing
@testable import FastMailbox

@Suite struct UnknownVariableReporterTests {
    @Test("an unknown MN_ variable is reported once, at warning, naming the closest known variable")
    func reportsOnce() {
        let logs = CapturedLogs()
        let reporter = UnknownVariableReporter()
        let environment = ["MN_WORKER": "1", "MN_THROUGHPUT": "8", "HOME": "/root"]
        #expect(reporter.reportOnce(environment: environment, to: logs.logger()) == 1)
        #expect(logs.all.count == 1)
        #expect(logs.all.first?.level == .warning)
        #expect(logs.all.first?.message == "unknown environment variable MN_WORKER is ignored; did you mean MN_WORKERS?")
        #expect(logs.all.first?.metadata["config/variable"] == "MN_WORKER")
        #expect(logs.all.first?.metadata["config/closest"] == "MN_WORKERS")
        #expect(reporter.reportOnce(environment: environment, to: logs.logger()) == 0)
        #expect(logs.all.count == 1)
    }

    @Test("known variables alone log nothing")
    func knownOnly() {
        let logs = CapturedLogs()
        #expect(UnknownVariableReporter().reportOnce(environment: ["MN_WORKERS": "2"], to: logs.logger()) == 0)
        #expect(logs.all.isEmpty)
    }
}
