import Testing
@testable import MNScheduler

@Suite struct SchedulerConfigurationErrorTests {
    @Test("a bad value's error is one line naming the variable, the value and the allowed values")
    func oneLine() {
        do {
            _ = try SchedulerConfiguration().resolved(environment: ["MN_WORKERS": "0"],
                                                      cpus: CPUAvailability(affinityCPUs: 2, cgroupQuotaCPUs: nil, onlineCPUs: 2))
            Issue.record("MN_WORKERS=0 was accepted")
        } catch {
            #expect(error.description == "bad configuration value MN_WORKERS=\"0\": allowed is an integer in 1...1024 or \"auto\"")
            #expect(!error.description.contains("\n"))
        }
    }
}
