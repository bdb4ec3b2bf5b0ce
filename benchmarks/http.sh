#!/usr/bin/env bash
# Measures `discfg serve` on the embedded SQLite store with wrk: GET and durable PUT
# throughput and p50/p99 latency, printed as a table. A benchmark, not a test.
#
#   benchmarks/http.sh [seconds] [connections]
#
# Builds release, starts the server on a fresh SQLite file on a free loopback port,
# and stops it afterwards. Needs wrk (apt-get install wrk; installed here if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
connections="${2:-64}"
threads=2

if ! command -v wrk >/dev/null 2>&1; then
  echo "bench: installing wrk" >&2
  apt-get update -qq >/dev/null && apt-get install -y -qq wrk >/dev/null
fi
scratch="${SCRATCH_PATH:-.build}"   # another build folder, e.g. .build-bench, if .build is busy
swift build -c release --product discfg --scratch-path "$scratch" >&2
bin="$scratch/release/discfg"
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
export DISCFG_STORE="sqlite://$work/bench.db"
"$bin" create bench -f silent
"$bin" set bench /app/greeting "hello, world" -f silent

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --port "$port" --log-level error 2>"$work/serve.log" &
server=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done

cat > "$work/put.lua" <<'LUA'
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("PUT", "/v1/bench/keys/load/k" .. (counter % 1000), nil, "value-" .. counter)
end
LUA

run() { # name, extra wrk args…
  local name=$1; shift
  wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$@" > "$work/$name.txt"
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/$name.txt")
  p50=$(awk '$1=="50%" {print $2}' "$work/$name.txt")
  p99=$(awk '$1=="99%" {print $2}' "$work/$name.txt")
  errors=$(awk '/Non-2xx/ {print $NF}' "$work/$name.txt")
  printf "%-12s %12s %10s %10s %8s\n" "$name" "$rps" "$p50" "$p99" "${errors:-0}"
}

echo "discfg serve on SQLite, $connections connections, $threads wrk threads, ${duration}s each, $(nproc) cores"
printf "%-12s %12s %10s %10s %8s\n" "operation" "requests/s" "p50" "p99" "non-2xx"
run GET "http://127.0.0.1:$port/v1/bench/keys/app/greeting"
run PUT -s "$work/put.lua" "http://127.0.0.1:$port"
echo "store revision after PUTs: $("$bin" info bench -f json | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"])')"
