@_exported import MNScheduler
