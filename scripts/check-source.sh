#!/usr/bin/env bash
# Source hygiene check: comments say what is true now; public API is documented; nothing
# is declared and never used. Fails (exit 1) naming file:line and the rule for each finding.
#
# Usage: scripts/check-source.sh [--report] [--paths PATH...] [--no-build]
#   --report    print every finding and the counts, exit 0
#   --paths     the files or folders checked (default: Sources)
#   --no-build  reuse the symbol graphs of the last run instead of building
#
# Rules. Comments are `//`, `///` and block comments in .swift, .h and .c files; DocC
# articles (.md) get the issue-reference and date rules only; test and suite names
# (`@Suite("…")`, `@Test("…")`) the issue-reference, date and round-name rules.
#   issue-reference  "issue 12", "issues 9 and 12", "issue #12", "PR 7", a lone "#12",
#                    and .../issues/12 or .../pull/12 links.
#   date             2025-11-03, 2025-11, "Nov 2025", "3 November 2025", 11/03/2025,
#                    "since 2025" (also "as of", "until", "early", "late", "mid").
#   round-name       "Round `tally`", "round 3", "Defect 12", "Finding 4".
#   measured-figure  a number with a unit of cost:
#                    - instructions or cycles: "314 instructions", "a 12-cycle load";
#                    - bytes (B, KB, KiB, MB, MiB, GB, GiB): "136 bytes", "1.5 MB", unless
#                      the number is a power of two: sizes like "8-byte mark", "64-byte
#                      cache line", "4 KiB page" are structure, not measurements, and
#                      so is a limit ("at most", "up to", "maximum", "cut to" N bytes);
#                    - time after "~", "≈", "about", "around", "roughly", "nearly",
#                      "almost", "some", "approx(imately)": "~40 ns", "about 2 ms";
#                    - time per operation: "9 ns a send", "40 ns per message";
#                    - a ratio written against its number: "2.4x", "3×" ("2 × threshold",
#                      with a space, is arithmetic and passes);
#                    - any percentage: "12 %", "40 percent";
#                    - a throughput: "1.5 M msg/s", "10 messages per second".
#                    A plain duration ("every 200 ms", "default 10 s") passes: a
#                    configured value is a fact about the code. Numbers spelled out in
#                    words ("two instructions") pass.
#   long-header      the leading comment block of a file (comment and blank lines before
#                    the first line of code) runs past 60 lines.
#   undocumented-public
#                    a public or open symbol of FastMailbox, MNScheduler,
#                    FastMailboxDistributed (FastMailboxTestKit when it exists) without a
#                    doc comment, read from the symbol graph (swift symbolgraph-extract of
#                    the debug build). Not findings: symbols without a source location
#                    (synthesized: ==, !=, hashValue, implicit initialisers), and symbols
#                    that implement a protocol requirement and inherit its documentation
#                    (the graph then carries the requirement's doc comment).
#                    FastMailboxServiceLifecycle is empty without its package trait, so
#                    its comments are checked and its symbols are not.
#   unused-declaration
#                    a non-public member or file-level declaration (func, var, let, case,
#                    struct, class, enum, actor, protocol, typealias, associatedtype) in the
#                    checked paths whose name occurs nowhere else in the Swift code of
#                    Sources, Tests, Examples, Distributed/Sources and Distributed/Tests
#                    (comments and string text excluded; interpolations count). A private
#                    or fileprivate name counts its own file only. Not candidates: public and
#                    open declarations, locals, operators, init, deinit, subscripts,
#                    `override`s, @main, @_cdecl, @_silgen_name, ArgumentParser's property
#                    wrappers, @Test/@Suite, CodingKeys, stored properties and cases of
#                    Codable types, cases of raw-value and CaseIterable enums, layout
#                    padding (a stored CacheLinePadding or tuple of zeros), and the names
#                    of requirements of outside protocols (description, hash, encode,
#                    run, enqueue, the Distributed and Metrics/Logging handler
#                    requirements; witnessNames in CheckSource.swift): the language
#                    reaches those by conformance, not by name.
#                    It can miss: any name that also occurs elsewhere (overloads, a same-
#                    named member of another type, a parameter label of that name), a
#                    property only ever assigned (`self.x = x` counts as a use), code used
#                    only by tests or by other unused code, and C declarations.
# Prints `file:line: rule: message` for each finding, then the counts per rule and folder.
# The allow-list is empty: fix the finding.
# The checker is scripts/CheckSource.swift, compiled into .build/check-source on first use
# (and when it changes); the symbol graphs need `swift build --target` of the modules
# checked (a no-op when .build is current).
set -euo pipefail
cd "$(dirname "$0")/.."

report=()
paths=()
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --report) report=(--report); shift ;;
    --no-build) build=0; shift ;;
    --paths) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do paths+=("$1"); shift; done ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-source: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#paths[@]} -gt 0 ] || paths=(Sources)
for p in "${paths[@]}"; do
  [ -e "$p" ] || { echo "check-source: no such path '$p'" >&2; exit 2; }
done

out=.build/check-source
mkdir -p "$out"
checker="$out/check-source"
if [ ! -x "$checker" ] || [ scripts/CheckSource.swift -nt "$checker" ]; then
  swiftc -O scripts/CheckSource.swift -o "$checker"
fi

# Symbol graphs of the library modules whose sources are in the checked paths.
modules=()
for m in FastMailbox MNScheduler FastMailboxDistributed FastMailboxTestKit; do
  [ -d "Sources/$m" ] || continue
  for p in "${paths[@]}"; do
    p="${p%/}"
    case "Sources/$m/" in "$p"/*) modules+=("$m"); break ;; esac
    case "$p/" in "Sources/$m"/*) modules+=("$m"); break ;; esac
  done
done
symbols=()
if [ ${#modules[@]} -gt 0 ]; then
  graphs="$out/symbolgraph"
  if [ $build = 1 ]; then
    scripts/bootstrap.sh  # Concurrency Kit, which the modules build against
    for m in "${modules[@]}"; do  # one at a time: --target takes one module
      swift build --target "$m" >"$out/build.log" 2>&1 \
        || { cat "$out/build.log" >&2; echo "check-source: swift build --target $m failed" >&2; exit 2; }
    done
    bin=$(swift build --show-bin-path)
    triple=$(swiftc -print-target-info | sed -n 's/.*"triple": "\(.*\)".*/\1/p' | head -n 1)
    for m in "${modules[@]}"; do
      rm -rf "${graphs:?}/$m"; mkdir -p "$graphs/$m"
      swift symbolgraph-extract -module-name "$m" -target "$triple" -I "$bin/Modules" \
        -I Sources/CConcurrencyKit -minimum-access-level public -output-dir "$graphs/$m"
    done
  fi
  for m in "${modules[@]}"; do
    [ -d "$graphs/$m" ] || { echo "check-source: no symbol graph of $m (run without --no-build)" >&2; exit 2; }
    symbols+=(--symbols "$graphs/$m")
  done
fi

"$checker" "${report[@]}" "${symbols[@]}" --paths "${paths[@]}" \
  --scan Sources Tests Examples Distributed/Sources Distributed/Tests
