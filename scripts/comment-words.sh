#!/usr/bin/env bash
# Words of comment per module: the words on the lines of Sources/<module>/*.swift that
# start with //, ///, /* or *. Usage: scripts/comment-words.sh [module...]
# (default: the two core modules, MNScheduler and FastMailbox).
set -euo pipefail
cd "$(dirname "$0")/.."
modules=("$@")
[ ${#modules[@]} -eq 0 ] && modules=(MNScheduler FastMailbox)
for module in "${modules[@]}"; do
  printf '%s %s\n' "$module" "$(cat Sources/"$module"/*.swift | grep -E '^\s*(//|/\*|\*)' | wc -w)"
done
