import FastMailbox
import Logging
import MNScheduler
import FastMailboxTestKit

/// A system for one test: `workers` workers and a silent logger (supervisor warnings from
/// tests that throw on purpose would flood the CI log; the logging tests use their own).
package func makeSystem(workers: Int = 2) throws -> ActorSystem {
    var configuration = SchedulerConfiguration()
    configuration.workers = workers
    return try ActorSystem(configuration: configuration,
                           logger: Logger(label: "fastmailbox.tests") { _ in SwiftLogNoOpLogHandler() })
}

/// A system on `deterministic` with a silent logger (tests throw on purpose).
package func makeDeterministicSystem(_ deterministic: DeterministicScheduler,
                                     supervisor: SupervisorStrategy = .default) -> ActorSystem {
    ActorSystem(scheduler: deterministic, defaultSupervisor: supervisor,
                logger: Logger(label: "fastmailbox.tests") { _ in SwiftLogNoOpLogHandler() })
}
