// ring-bench — FastMailbox's benchmark suite. See Benchmarks/README.md and `ring-bench --help`.
RingBench.main()
