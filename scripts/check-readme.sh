#!/usr/bin/env bash
# README snippets are code that builds. Every ```swift block in README.md is preceded by a
# marker line saying where its code is compiled:
#   <!-- compiled: PATH -->   every non-blank line of the block occurs in PATH, in order
#                             (PATH is a source file of an example or test target, so the
#                             build compiles what the README shows);
#   <!-- manifest -->         a Package.swift fragment for the reader's own package (it
#                             names this package by URL, so it cannot build here).
# Fails naming the block's line and the first line not found.
set -euo pipefail
cd "$(dirname "$0")/.."
readme=${1:-README.md}
status=0
awk -v readme="$readme" '
  function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
  /^<!-- (compiled: [^ ]+|manifest) -->$/ { marker = $0; next }
  /^```swift/ { inblock = 1; start = NR; n = 0; m = marker; marker = ""; next }
  inblock && /^```/ {
    inblock = 0
    if (m == "") { printf "%s:%d: a swift block without a <!-- compiled: PATH --> or <!-- manifest --> marker\n", readme, start; bad = 1; next }
    if (m == "<!-- manifest -->") next
    path = m; sub(/^<!-- compiled: /, "", path); sub(/ -->$/, "", path)
    if ((getline line < path) < 0) { printf "%s:%d: %s does not exist\n", readme, start, path; bad = 1; next }
    k = 1
    do { if (k <= n && trim(line) == want[k]) k++ } while (k <= n && (getline line < path) > 0)
    close(path)
    if (k <= n) { printf "%s:%d: not in %s (in this order): %s\n", readme, start, path, want[k]; bad = 1 }
    next
  }
  inblock { t = trim($0); if (t != "") want[++n] = t; next }
  /^$/ { next }
  { marker = "" }
  END { exit bad }
' "$readme" || status=1
[ $status -eq 0 ] && echo "check-readme: every swift block in $readme is compiled or marked as a manifest"
exit $status
