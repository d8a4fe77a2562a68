#!/usr/bin/env bash
# Compares the public API of the library products users import (FastMailbox, MNScheduler,
# FastMailboxTestKit) with the checked-in listings API/<Module>.txt, and fails on any
# difference, so a public change is always a deliberate one. `--update` rewrites the
# listings instead (commit them with the change).
#
# A listing is made from the module's symbol graph (swift symbolgraph-extract, public
# symbols only; the `package` and internal ones are left out): one line per declaration,
# `<path>: <declaration>`, plus `<type>: conforms to <protocol>` lines, sorted (members a
# type only inherits from a protocol extension are left out). Its first line counts the
# public types (structs, classes, enums, protocols and actors, nested ones included) and
# the top-level type aliases. Extensions of other modules' types are listed under their path.
# Builds the modules in debug first (what `swift build` makes).
set -euo pipefail
cd "$(dirname "$0")/.."

update=false
case "${1:-}" in
  --update) update=true ;;
  "") ;;
  *) echo "usage: scripts/api-check.sh [--update]" >&2; exit 2 ;;
esac

modules=(FastMailbox MNScheduler FastMailboxTestKit)
swift build --target FastMailboxTestKit >&2  # builds all three modules
bin=$(swift build --show-bin-path)
triple=$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT

status=0
for module in "${modules[@]}"; do
  mkdir -p "$graphs/$module"
  swift symbolgraph-extract -module-name "$module" -target "$triple" \
    -I "$bin/Modules" -I Sources/CConcurrencyKit \
    -minimum-access-level public -skip-synthesized-members -output-dir "$graphs/$module"
  python3 - "$module" "$graphs/$module" >"$graphs/$module.txt" <<'PY'
import json, os, sys

module, folder = sys.argv[1], sys.argv[2]
type_kinds = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.actor"}
lines, types, aliases = set(), set(), set()
for name in sorted(os.listdir(folder)):
    graph = json.load(open(os.path.join(folder, name)))
    names = {}
    for symbol in graph["symbols"]:
        path = ".".join(symbol["pathComponents"])
        names[symbol["identifier"]["precise"]] = path
        declaration = "".join(f["spelling"] for f in symbol.get("declarationFragments", []))
        lines.add(f"{path}: {' '.join(declaration.split())}")
        if symbol["kind"]["identifier"] in type_kinds:
            types.add(path)
        elif symbol["kind"]["identifier"] == "swift.typealias" and len(symbol["pathComponents"]) == 1:
            aliases.add(path)
    for relation in graph.get("relationships", []):
        if relation["kind"] not in ("conformsTo", "inheritsFrom"):
            continue
        source = names.get(relation["source"])
        if source is None:
            continue  # a member of another module's type: listed with that type's module
        target = names.get(relation["target"]) or relation.get("targetFallback") or relation["target"]
        if target == "Swift.SendableMetatype":
            continue  # implied by Sendable
        verb = "conforms to" if relation["kind"] == "conformsTo" else "inherits from"
        lines.add(f"{source}: {verb} {target}")
nested = sum(1 for name in types if "." in name)
print(f"# {module}: {len(types)} public types ({len(types) - nested} top-level, {nested} nested), "
      f"{len(aliases)} public type aliases")
for line in sorted(lines):
    print(line)
PY
  listing="API/$module.txt"
  if $update; then
    mkdir -p API
    cp "$graphs/$module.txt" "$listing"
    echo "api-check: wrote $listing ($(head -1 "$listing" | sed 's/^# //'))"
  elif ! diff -u "$listing" "$graphs/$module.txt"; then
    echo "api-check: the public API of $module differs from $listing (above: - listed, + built)." >&2
    echo "api-check: if the change is deliberate, run scripts/api-check.sh --update and commit $listing." >&2
    status=1
  else
    echo "api-check: $module matches $listing ($(head -1 "$listing" | sed 's/^# [^:]*: //'))"
  fi
done
exit $status
