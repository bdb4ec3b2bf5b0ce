#!/usr/bin/env bash
# Many agents following one config on moto_server: table requests per agent per hour and the
# staleness of each change (write acknowledged → agent holding it), from discfg-agent-sim.
# Usage: benchmarks/agents.sh [discfg-agent-sim arguments]
#   default: --agents 500 --minutes 5 --changes-per-minute 10 --interval 15 --keys 100
#   e.g. benchmarks/agents.sh --minutes 1 for a quick run; add --json for benchmarks/cost.sh;
#   --deploy: the agents follow a staged deployment and its rollback on an alarm instead.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product discfg-agent-sim >/dev/null
"$(swift build --show-bin-path)/discfg-agent-sim" "$@"
