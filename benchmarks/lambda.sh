#!/usr/bin/env bash
# Cold start and warm latency of `discfg lambda` through the Lambda Runtime API.
# Usage: benchmarks/lambda.sh [cold-runs] [warm-requests]   (env SCRATCH_PATH to build elsewhere)
# Builds release, then runs discfg-lambda-bench: it starts a Runtime API on a loopback
# port, spawns the function process per cold start, and prints a table.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${SCRATCH_PATH:-.build}"
scripts/setup
swift build -c release --scratch-path "$scratch" --product discfg
swift build -c release --scratch-path "$scratch" --product discfg-lambda-bench
"$scratch/release/discfg-lambda-bench" "$scratch/release/discfg" "${1:-20}" "${2:-500}"
