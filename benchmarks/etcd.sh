#!/usr/bin/env bash
# discfg's etcd API beside a real etcd, on this machine, in one run:
#   1. `etcdctl check perf --load=s` against each (etcd's own pass/fail judgement of
#      throughput and latency, its figures printed as they come);
#   2. a put/range load through one gRPC client (grpcio) against each, in rounds: each
#      load runs on the two servers back to back, and which goes first alternates from
#      round to round (so a machine that speeds up or slows down during the run favours
#      neither, and moves little between the two halves of a pair); printed with the
#      ratio discfg / etcd of each round and their median (targets: put >= 1.0x,
#      range >= 1.5x, p99 no worse), and the CPU each server and the client spent per
#      request (they share the cores);
#   3. the instructions discfg spends per durable put (valgrind --tool=callgrind, every
#      thread, a fixed number of puts at 8 in flight): the same count on a quiet machine
#      and a busy one, so a change's effect shows where the wall-clock figures wobble.
# Both servers write durably: discfg serve --etcd on the embedded SQLite store (release
# build, Swift runtime linked in), Debian's etcd-server with its default fsync.
# Usage: [BINARY=path/to/discfg] benchmarks/etcd.sh [seconds-per-load] [concurrency] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
concurrency="${2:-32}"
rounds="${3:-3}"
scripts/setup >/dev/null
command -v etcd >/dev/null || { echo "etcd.sh: needs Debian's etcd-server (etcd)" >&2; exit 1; }
if ! command -v valgrind >/dev/null; then
  echo "etcd.sh: installing valgrind" >&2
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq >/dev/null && $sudo_cmd apt-get install -y -qq valgrind >/dev/null
fi
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

echo "== put/range load: $seconds s each, $concurrency concurrent requests, grpcio, $rounds rounds"
for round in $(seq "$rounds"); do
  order="etcd discfg"
  [ $((round % 2)) -eq 0 ] && order="discfg etcd"
  for load in put range prefix; do
    for name in $order; do
      if [ "$name" = etcd ]; then port=$etcd_port pid=$etcd_pid; else port=$discfg_port pid=$discfg_pid; fi
      python3 benchmarks/etcd_load.py "$port" "$seconds" "$concurrency" "$pid" "$load" | tee -a "$work/$name.$round.txt" | sed "s/^/round $round  $(printf '%-7s' "$name")/"
    done
  done
done
python3 - "$work" "$rounds" <<'PY'
import re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def read(path):
    rows = {}
    for line in open(path):
        found = re.match(r"(.+?)\s+([0-9.]+) req/s\s+p50\s+([0-9.]+) ms\s+p99\s+([0-9.]+) ms\s+cpu\s+([0-9.]+) us/req\s+client cpu\s+([0-9.]+) us/req", line)
        if found:
            rows[found.group(1).strip()] = [float(found.group(n)) for n in (2, 3, 4, 5, 6)]  # rate, p50, p99, cpu, client cpu
    return rows
runs = [(read(f"{work}/etcd.{r}.txt"), read(f"{work}/discfg.{r}.txt")) for r in range(1, rounds + 1)]
print("== discfg / etcd, each round and the median")
for name in runs[0][0]:
    rate = [d[name][0] / e[name][0] for e, d in runs]
    cpu = [d[name][3] / e[name][3] for e, d in runs]
    client = [d[name][4] / e[name][4] for e, d in runs]
    p99 = [(d[name][2], e[name][2]) for e, d in runs]
    rounds_text = "  ".join(f"{x:4.2f}x" for x in rate)
    print(f"{name:26} throughput {rounds_text}   median {statistics.median(rate):4.2f}x")
    print(f"{'':26} p99 ms discfg vs etcd {'  '.join(f'{d:.1f} vs {e:.1f}' for d, e in p99)}")
    print(f"{'':26} cpu/req median: server {statistics.median(cpu):4.2f}x, client {statistics.median(client):4.2f}x")
PY

# Instructions per put: discfg under callgrind, counting only while a fixed number of puts
# is sent (after 1,500 to warm up), every thread. Valgrind 3.19 cannot read the DWARF 5
# of a Swift binary (the copy measured has no debug info) and, in a program whose main
# thread waits in dispatch_main, faults on its sigsuspend (it writes to the signal mask
# it is given, which libdispatch keeps read-only): a preloaded sigsuspend hands it a copy.
puts=5000
strip -g -o "$work/discfg-nodebug" "$binary"
cat > "$work/sigsuspend.c" <<'C'
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
int sigsuspend(const sigset_t *mask) { sigset_t copy = *mask; return (int)syscall(SYS_rt_sigsuspend, &copy, 8); }
C
cc -shared -fPIC -O2 -o "$work/sigsuspend.so" "$work/sigsuspend.c"
counted_port="$(free_port)"
mkdir -p "$work/counted"
LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/counted/callgrind.out.%p" \
  "$work/discfg-nodebug" serve --store "sqlite://$work/counted/discfg.db" --port 0 --etcd "127.0.0.1:$counted_port" --log-level error 2>"$work/counted/log" &
counted_pid=$!
pids+=($counted_pid)
for _ in $(seq 300); do ETCDCTL_API=3 etcdctl --endpoints="127.0.0.1:$counted_port" endpoint status >/dev/null 2>&1 && break; sleep 0.3; done
python3 benchmarks/etcd_load.py "$counted_port" --puts 1500 8 >/dev/null
callgrind_control -z "$counted_pid" >/dev/null 2>&1; callgrind_control -i on "$counted_pid" >/dev/null 2>&1
python3 benchmarks/etcd_load.py "$counted_port" --puts "$puts" 8 >/dev/null
callgrind_control -i off "$counted_pid" >/dev/null 2>&1; callgrind_control -d "$counted_pid" >/dev/null 2>&1
sleep 1
total=$(for f in "$work"/counted/callgrind.out.*; do callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; done | sort -n | tail -1)
echo "== discfg instructions per durable put (callgrind, $puts puts at 8 in flight, every thread): $(( ${total:-0} / puts ))"
