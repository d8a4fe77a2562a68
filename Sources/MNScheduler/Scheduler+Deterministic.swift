// Scheduler+Deterministic — what the runtime asks a scheduler about deterministic mode and
// time: whether it is a DeterministicScheduler's, its engine, and its clock (the one clock
// seam: SchedulerClock).

extension Scheduler {
    /// True for the scheduler of a `DeterministicScheduler`: no worker threads; its turns
    /// run only when the test drives it.
    package var isDeterministic: Bool { gate.deterministic != nil }

    /// The engine of a DeterministicScheduler's scheduler, nil for a real one.
    package var deterministicEngine: DeterministicEngine? { gate.deterministic }

    /// The clock this scheduler's timeouts read: virtual for a deterministic scheduler,
    /// monotonic otherwise.
    package var clock: SchedulerClock { SchedulerClock(virtual: gate.deterministic?.clock) }
}
