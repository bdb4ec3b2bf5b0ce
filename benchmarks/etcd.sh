#!/usr/bin/env bash
# discfg's etcd API beside a real etcd, on this machine, in one run:
#   1. `etcdctl check perf --load=s` against each (etcd's own pass/fail judgement of
#      throughput and latency, its figures printed as they come);
#   2. a put/range load through one gRPC client (grpcio) against each, printed with
#      the ratio discfg / etcd (targets: put >= 1.0x, range >= 1.5x, p99 no worse).
# Both servers write durably: discfg serve --etcd on the embedded SQLite store (release
# build, Swift runtime linked in), Debian's etcd-server with its default fsync.
# Usage: [BINARY=path/to/discfg] benchmarks/etcd.sh [seconds-per-load] [concurrency]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
concurrency="${2:-32}"
scripts/setup >/dev/null
command -v etcd >/dev/null || { echo "etcd.sh: needs Debian's etcd-server (etcd)" >&2; exit 1; }
# BINARY names an already built discfg to measure instead.
binary="${BINARY:-.build/release/discfg}"
[ -n "${BINARY:-}" ] || swift build -c release --static-swift-stdlib --product discfg >/dev/null
work="$(mktemp -d)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
trap 'status=$?; for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done; rm -rf "$work"; exit $status' EXIT

etcd_port="$(free_port)"; peer_port="$(free_port)"
etcd --name bench --data-dir "$work/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" \
  --advertise-client-urls "http://127.0.0.1:$etcd_port" --listen-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" --initial-cluster "bench=http://127.0.0.1:$peer_port" \
  >"$work/etcd.log" 2>&1 &
etcd_pid=$!
pids+=($etcd_pid)
"$binary" serve --store "sqlite://$work/discfg.db" --port 0 --etcd 127.0.0.1:0 --log-level error 2>"$work/discfg.log" &
discfg_pid=$!
pids+=($discfg_pid)
for _ in $(seq 100); do
  discfg_port="$(grep -o 'etcd API over config etcd on 127.0.0.1:[0-9]*' "$work/discfg.log" 2>/dev/null | sed 's/.*://' || true)"
  if [ -n "$discfg_port" ] && ETCDCTL_API=3 etcdctl --endpoints="127.0.0.1:$etcd_port" endpoint health >/dev/null 2>&1; then break; fi
  sleep 0.2
done
[ -n "${discfg_port:-}" ] || { echo "etcd.sh: discfg serve --etcd did not start" >&2; cat "$work/discfg.log" >&2; exit 1; }

echo "== etcdctl check perf --load=s"
for target in "etcd 127.0.0.1:$etcd_port" "discfg 127.0.0.1:$discfg_port"; do
  set -- $target
  echo "-- $1"
  ETCDCTL_API=3 etcdctl --endpoints="$2" check perf --load=s 2>&1 | tr '\r' '\n' | grep -Ev '^ *[0-9]+ / 60|^$' || true
done

echo "== put/range load: $seconds s each, $concurrency concurrent requests, grpcio"
python3 benchmarks/etcd_load.py "$etcd_port" "$seconds" "$concurrency" "$etcd_pid" | tee "$work/etcd.txt" | sed 's/^/etcd    /'
python3 benchmarks/etcd_load.py "$discfg_port" "$seconds" "$concurrency" "$discfg_pid" | tee "$work/discfg.txt" | sed 's/^/discfg  /'
python3 - "$work/etcd.txt" "$work/discfg.txt" <<'PY'
import re, sys
def read(path):
    rows = {}
    for line in open(path):
        found = re.match(r"(.+?)\s+([0-9.]+) req/s\s+p50\s+([0-9.]+) ms\s+p99\s+([0-9.]+) ms\s+cpu\s+([0-9.]+) us/req", line)
        if found:
            rows[found.group(1).strip()] = [float(found.group(n)) for n in (2, 3, 4, 5)]  # rate, p50, p99, cpu
    return rows
etcd, discfg = read(sys.argv[1]), read(sys.argv[2])
print("== discfg / etcd")
for name in etcd:
    e, d = etcd[name], discfg[name]
    print(f"{name:26} throughput {d[0] / e[0]:5.2f}x   p99 {d[2]:7.2f} ms vs {e[2]:7.2f} ms   cpu/req {d[3] / e[3]:5.2f}x")
PY
