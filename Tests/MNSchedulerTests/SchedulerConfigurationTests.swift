import Testing
@testable import MNScheduler

@Suite struct SchedulerConfigurationTests {
    let cpus4 = CPUAvailability(affinityCPUs: 4, cgroupQuotaCPUs: nil, onlineCPUs: 8)

    @Test("every malformed or out-of-range environment value is refused, naming the variable, the value and the range")
    func badEnvironmentValues() {
        let bad: [(String, String)] = [
            ("MN_WORKERS", "0"), ("MN_WORKERS", "-1"), ("MN_WORKERS", "1025"), ("MN_WORKERS", "two"),
            ("MN_WORKERS", ""), ("MN_WORKERS", "2.5"), ("MN_WORKERS", " 2"),
            ("MN_THROUGHPUT", "0"), ("MN_THROUGHPUT", "1000001"), ("MN_THROUGHPUT", "x"), ("MN_THROUGHPUT", "-64"),
            ("MN_SPIN", "-1"), ("MN_SPIN", "1000001"), ("MN_SPIN", "lots"),
            ("MN_IDLE_SEARCH_US", "-1"), ("MN_IDLE_SEARCH_US", "1000001"), ("MN_IDLE_SEARCH_US", "32us"),
            ("MN_RUNQUEUE_CAPACITY", "3"), ("MN_RUNQUEUE_CAPACITY", "100"), ("MN_RUNQUEUE_CAPACITY", "2"),
            ("MN_RUNQUEUE_CAPACITY", "131072"), ("MN_RUNQUEUE_CAPACITY", "0"), ("MN_RUNQUEUE_CAPACITY", "big"),
            ("MN_PIN", "maybe"), ("MN_PIN", "2"), ("MN_PIN", ""),
            ("MN_IDLE_MAILBOX_RECLAIM_MS", "-1"), ("MN_IDLE_MAILBOX_RECLAIM_MS", "3600001"),
            ("MN_IDLE_MAILBOX_RECLAIM_MS", "1s"),
        ]
        for (variable, value) in bad {
            do {
                _ = try SchedulerConfiguration().resolved(environment: [variable: value], cpus: cpus4)
                Issue.record("\(variable)=\(value) was accepted")
            } catch {
                #expect(error.variable == variable)
                #expect(error.value == value)
                let setting = SchedulerConfiguration.Setting.allCases.first { $0.environmentVariable == variable }!
                #expect(error.allowed == setting.allowed)
                #expect(error.description.contains(variable))
                #expect(error.description.contains("\"\(value)\""))
                #expect(error.description.contains(setting.allowed))
            }
        }
    }

    @Test("MN_RING_EPOCH: auto or fenced (any case) pass; anything else is refused, naming the variable, the value and the accepted values, even with readsEnvironment false")
    func ringEpochVariable() throws {
        for value in ["auto", "fenced", "FENCED", "Auto"] {
            _ = try SchedulerConfiguration().resolved(environment: ["MN_RING_EPOCH": value], cpus: cpus4)
        }
        #expect(try RingEpoch.checkEnvironment([:]) == false)
        #expect(try RingEpoch.checkEnvironment(["MN_RING_EPOCH": "auto"]) == false)
        #expect(try RingEpoch.checkEnvironment(["MN_RING_EPOCH": "Fenced"]) == true)
        for value in ["", "fence", " fenced", "fenced ", "asymmetric", "1", "off"] {
            for configuration in [SchedulerConfiguration(), SchedulerConfiguration(readsEnvironment: false)] {
                do {
                    _ = try configuration.resolved(environment: ["MN_RING_EPOCH": value], cpus: cpus4)
                    Issue.record("MN_RING_EPOCH=\(value) was accepted (readsEnvironment: \(configuration.readsEnvironment))")
                } catch {
                    #expect(error.variable == "MN_RING_EPOCH")
                    #expect(error.value == value)
                    #expect(error.allowed == RingEpoch.allowedValues)
                    #expect(error.description.contains("MN_RING_EPOCH=\"\(value)\""))
                    #expect(error.description.contains("one of auto, fenced"))
                }
            }
        }
    }

    @Test("valid environment values are used and reported as coming from the environment")
    func goodEnvironmentValues() throws {
        let env = ["MN_WORKERS": "3", "MN_THROUGHPUT": "10", "MN_SPIN": "0", "MN_IDLE_SEARCH_US": "0",
                   "MN_RUNQUEUE_CAPACITY": "4", "MN_PIN": "yes",
                   "MN_BLOCKING_THRESHOLD_MS": "25", "MN_MAX_BLOCKING_THREADS": "7", "MN_IDLE_MAILBOX_RECLAIM_MS": "0"]
        let r = try SchedulerConfiguration().resolved(environment: env, cpus: cpus4)
        #expect(r.workers == 3 && r.throughput == 10 && r.spinCount == 0 && r.runQueueCapacity == 4 && r.pinWorkers)
        #expect(r.idleSearchMicroseconds == 0)
        #expect(r.blockingThresholdMilliseconds == 25 && r.maxBlockingThreads == 7 && r.idleMailboxReclaimMilliseconds == 0)
        for setting in SchedulerConfiguration.Setting.allCases { #expect(r.source(of: setting) == .environment) }
        let auto = try SchedulerConfiguration().resolved(environment: ["MN_WORKERS": "auto", "MN_PIN": "off"], cpus: cpus4)
        #expect(auto.workers == 4 && !auto.pinWorkers)
    }

    @Test("defaults apply when nothing is set: W is the usable CPUs, throughput 64")
    func defaults() throws {
        let r = try SchedulerConfiguration().resolved(environment: [:], cpus: cpus4)
        #expect(r.workers == 4)
        #expect(r.throughput == 64)
        #expect(r.spinCount == SchedulerConfiguration.defaultSpinCount)
        #expect(r.idleSearchMicroseconds == 32)
        #expect(r.runQueueCapacity == 4_096)
        #expect(r.pinWorkers == false)
        for setting in SchedulerConfiguration.Setting.allCases { #expect(r.source(of: setting) == .default) }
    }

    @Test("a value set in code wins over the environment, which wins over the default")
    func precedence() throws {
        let env = ["MN_WORKERS": "3", "MN_THROUGHPUT": "10"]
        let r = try SchedulerConfiguration(workers: 2).resolved(environment: env, cpus: cpus4)
        #expect(r.workers == 2 && r.source(of: .workers) == .code)
        #expect(r.throughput == 10 && r.source(of: .throughput) == .environment)
        #expect(r.spinCount == SchedulerConfiguration.defaultSpinCount && r.source(of: .spinCount) == .default)
        let ignoring = try SchedulerConfiguration(readsEnvironment: false).resolved(environment: env, cpus: cpus4)
        #expect(ignoring.workers == 4 && ignoring.throughput == 64)
        // The effective configuration reproduces itself whatever the environment says.
        let again = try r.configuration.resolved(environment: ["MN_WORKERS": "7"], cpus: cpus4)
        #expect(again.workers == 2 && again.throughput == 10)
        #expect(r.description.contains("from code"))
    }

    @Test("bad values set in code are refused by Scheduler(configuration:), naming the property")
    func badCodeValues() {
        let bad: [(SchedulerConfiguration, String)] = [
            (SchedulerConfiguration(workers: 0), "SchedulerConfiguration.workers"),
            (SchedulerConfiguration(workers: 5000), "SchedulerConfiguration.workers"),
            (SchedulerConfiguration(throughput: 0), "SchedulerConfiguration.throughput"),
            (SchedulerConfiguration(spinCount: -1), "SchedulerConfiguration.spinCount"),
            (SchedulerConfiguration(idleSearchMicroseconds: 1_000_001), "SchedulerConfiguration.idleSearchMicroseconds"),
            (SchedulerConfiguration(runQueueCapacity: 6), "SchedulerConfiguration.runQueueCapacity"),
            (SchedulerConfiguration(runQueueCapacity: 1 << 20), "SchedulerConfiguration.runQueueCapacity"),
        ]
        for (configuration, name) in bad {
            do {
                let scheduler = try Scheduler(configuration: configuration)
                scheduler.shutdown()
                Issue.record("\(configuration) was accepted")
            } catch {
                #expect(error.variable == name)
                #expect(error.description.contains(name))
            }
        }
    }

    @Test("the default worker count honours the affinity mask and a cgroup quota, rounding the quota up")
    func cpuAvailability() {
        #expect(CPUAvailability(affinityCPUs: 4, cgroupQuotaCPUs: nil, onlineCPUs: 16).usableCPUs == 4)
        #expect(CPUAvailability(affinityCPUs: 8, cgroupQuotaCPUs: 1.5, onlineCPUs: 16).usableCPUs == 2)
        #expect(CPUAvailability(affinityCPUs: 1, cgroupQuotaCPUs: 3, onlineCPUs: 16).usableCPUs == 1)
        #expect(CPUAvailability(affinityCPUs: nil, cgroupQuotaCPUs: nil, onlineCPUs: 6).usableCPUs == 6)
        #expect(CPUAvailability(affinityCPUs: 4, cgroupQuotaCPUs: 0.1, onlineCPUs: 4).usableCPUs == 1)
        #expect(CPUAvailability.parseCgroupV2CPUMax("max 100000\n") == nil)
        #expect(CPUAvailability.parseCgroupV2CPUMax("150000 100000\n") == 1.5)
        #expect(CPUAvailability.parseCgroupV2CPUMax("200000") == 2)
        #expect(CPUAvailability.parseCgroupV2CPUMax("garbage") == nil)
        #expect(CPUAvailability.parseCgroupV1(quota: "-1\n", period: "100000\n") == nil)
        #expect(CPUAvailability.parseCgroupV1(quota: "250000\n", period: "100000\n") == 2.5)
        let membership = CPUAvailability.parseProcSelfCgroup("12:cpu,cpuacct:/docker/abc\n0::/user.slice/x\n")
        #expect(membership.v2 == "/user.slice/x")
        #expect(membership.v1CPU?.controllers == "cpu,cpuacct")
        #expect(membership.v1CPU?.path == "/docker/abc")
        let here = CPUAvailability.current()
        #expect(here.usableCPUs >= 1)
        #expect(here.usableCPUs <= here.onlineCPUs)
    }
}
