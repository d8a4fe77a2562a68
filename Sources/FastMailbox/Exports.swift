// FastMailbox re-exports MNScheduler: `import FastMailbox` is all a user writes.
@_exported import MNScheduler
