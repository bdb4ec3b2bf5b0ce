#!/usr/bin/env bash
# Feature flags on the agent: a single-flag OFREP evaluation beside a REST GET of one key, the
# same loads alternated in one run on the machine at hand, and the evaluator's instructions
# per evaluation (callgrind, flag-eval-bench). A benchmark, not a test.
#
#   benchmarks/flags.sh [seconds] [rounds]        (defaults: 5 seconds, 2 rounds)
#   DISCFG_BIN=/path/to/release/discfg benchmarks/flags.sh 3 1
#
# The agent follows config `bench` on an embedded SQLite store. Loads (wrk, 2 threads, 64
# connections): GET /v1/bench/keys/app/greeting, and POST
# /v1/bench/ofrep/v1/evaluate/flags/checkout with a context that reaches the flag's third
# rule (five rules; `sem_ver`, then `fractional` over three weighted variants). Printed:
# req/s and p99 of each, and the ratio OFREP / GET.
#
# Needs wrk and valgrind; installs those missing from Debian. Builds in .build-static
# (SCRATCH_PATH for another).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-5}"
rounds="${2:-2}"

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v valgrind >/dev/null || need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
  echo "bench: installing ${need[*]}" >&2
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq >/dev/null && $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi
scratch="${SCRATCH_PATH:-.build-static}"
if [ -n "${DISCFG_BIN:-}" ]; then
  bin="$DISCFG_BIN"
else
  swift build -c release --static-swift-stdlib --product discfg --scratch-path "$scratch" >&2
  bin="$scratch/release/discfg"
fi
swift build -c release --product flag-eval-bench --scratch-path "$scratch" >&2
evalbench="$scratch/release/flag-eval-bench"

work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

export DISCFG_STORE="sqlite://$work/bench.db"
"$bin" create bench -f silent
"$bin" set bench /app/greeting "hello, world" -f silent
"$evalbench" flag-set > "$work/flags.json"
"$bin" set bench /flags/web --content-type json -d "$work/flags.json" -f silent
port=$(free_port)
"$bin" agent --config bench --port "$port" --cache-dir "$work/cache" 2>"$work/agent.log" & pids+=($!)
base="http://127.0.0.1:$port/v1/bench"
for _ in $(seq 100); do curl -sf "$base/keys/app/greeting" >/dev/null && break; sleep 0.1; done
body="{\"context\": $("$evalbench" context)}"
answer=$(curl -sf -X POST -H 'Content-Type: application/json' -d "$body" "$base/ofrep/v1/evaluate/flags/checkout")
echo "OFREP answer: $answer"
case "$answer" in *TARGETING_MATCH*) ;; *) echo "bench: the flag did not evaluate as expected" >&2; exit 1 ;; esac

cat > "$work/ofrep.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
LUA

run() { # name, extra wrk arguments…, url
  local name="$1"; shift
  wrk -t2 -c64 -d"${duration}s" --latency "$@" > "$work/$name.out"
  local rate p99
  rate=$(awk '/Requests\/sec/ {print $2}' "$work/$name.out")
  p99=$(awk '$1=="99%" {print $2}' "$work/$name.out")
  echo "$rate $p99"
}
printf '%-6s %-28s %12s %10s\n' round load req/s p99
for round in $(seq "$rounds"); do
  read -r get_rate get_p99 < <(run get "$base/keys/app/greeting")
  read -r ofrep_rate ofrep_p99 < <(run ofrep -s "$work/ofrep.lua" "$base/ofrep/v1/evaluate/flags/checkout")
  printf '%-6s %-28s %12s %10s\n' "$round" "agent REST GET one key" "$get_rate" "$get_p99"
  printf '%-6s %-28s %12s %10s\n' "$round" "agent OFREP one flag" "$ofrep_rate" "$ofrep_p99"
  python3 -c "print(f'       OFREP / GET: {float(\"$ofrep_rate\") / float(\"$get_rate\"):.2f}x')"
done

# Instructions per evaluation: the difference between 1,001 evaluations and 1, over 1,000.
one=$(valgrind --tool=callgrind --callgrind-out-file="$work/cg.1" "$evalbench" 1 2>&1 | awk '/Collected/ {print $4}')
many=$(valgrind --tool=callgrind --callgrind-out-file="$work/cg.1001" "$evalbench" 1001 2>&1 | awk '/Collected/ {print $4}')
echo "evaluator: $(( (many - one) / 1000 )) instructions per evaluation (callgrind, flag-eval-bench)"
