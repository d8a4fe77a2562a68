import FastMailbox
import Logging
import MNScheduler

/// A system on `workers` workers whose logs are discarded, walking idle mailboxes every
/// `idleMailboxReclaimMilliseconds` (0: never by itself, so a test decides when walks happen).
package func makeReclaimingSystem(workers: Int, idleMailboxReclaimMilliseconds: Int) throws -> ActorSystem {
    var configuration = SchedulerConfiguration()
    configuration.workers = workers
    configuration.idleMailboxReclaimMilliseconds = idleMailboxReclaimMilliseconds
    return try ActorSystem(configuration: configuration,
                           logger: Logger(label: "fastmailbox.tests") { _ in SwiftLogNoOpLogHandler() })
}
