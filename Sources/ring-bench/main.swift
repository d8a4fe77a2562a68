// ring-bench — FastMailbox's benchmark tool. See README.md and `ring-bench --help`.
import FastMailbox

RingBench.main(CommandLine.arguments)
