#!/usr/bin/env bash
# The gRPC half of FastMailboxDistributed: builds the nested package Distributed/
# (FastMailboxGRPC, example-cluster; SwiftNIO and grpc-swift-2 — the root package never
# builds them), runs its tests (gRPC's in-process transport), then example-cluster once:
# 3 node processes on 127.0.0.1, one killed; it exits non-zero on any violation.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cd Distributed
start=$(date +%s)
echo "== Distributed/: swift build (debug)"
swift build
echo "gRPC package build took $(( $(date +%s) - start )) s"
echo "== Distributed/: swift test"
swift test --no-parallel
echo "== example-cluster"
.build/debug/example-cluster --base-port "${CLUSTER_BASE_PORT:-47101}"
