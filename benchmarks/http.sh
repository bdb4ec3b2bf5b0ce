#!/usr/bin/env bash
# `discfg serve` on the embedded SQLite store beside etcd, the same loads alternated in one
# run, so every ratio is measured on the machine at hand. A benchmark, not a test.
#
#   benchmarks/http.sh [seconds] [rounds]        (defaults: 5 seconds, 2 rounds)
#   BENCH_SECTIONS="plain tls" DISCFG_BIN=.build/debug/discfg benchmarks/http.sh 1 1   (a quick look)
#
# Sections (BENCH_SECTIONS, all by default): plain (the loads below), tls (GET and PUT-1 at
# 64 connections over TLS: serve with a self-signed certificate made here by openssl, beside
# its plain HTTP and beside etcd serving its v2 API over TLS with the same certificate,
# wrk over https), instructions (callgrind) and process (hyperfine). DISCFG_BIN measures
# that binary instead of building one.
#
# Loads (wrk, 2 threads), at 64 and 256 connections:
#   GET        one key              discfg GET /v1/bench/keys/app/greeting   etcd GET /v2/keys/app/greeting
#   GET-304    If-None-Match        discfg answers 304; etcd v2 has no conditional GET and answers 200
#   PUT-1      durable PUT, one key                   discfg PUT …/keys/load/k     etcd PUT /v2/keys/load/k
#   PUT-1000   durable PUT, 1,000 keys in turn
# discfg runs as shipped: access logs on (to a file), no write acknowledged before the
# log holding it is fsynced; etcd fsyncs its WAL before acknowledging too. Printed: req/s, p50, p99,
# each server's CPU time per request (cpuµs, user and system, from /proc) and the machine's share
# busy during the load (busy: below 100 % the load waits on something else, such as the disk's
# sync), and the ratio to etcd; for discfg's PUTs, the group commits and log syncs (fsyncs) per
# second and the changes per commit, from /metrics. Then instruction counts per request for discfg
# (valgrind --tool=callgrind, a fixed number of requests on one connection), which do
# not wobble on a noisy machine, and `discfg get` as a process beside `etcdctl get`
# (hyperfine).
#
# Needs wrk, etcd (Debian etcd-server), etcdctl (etcd-client), hyperfine and valgrind;
# installs those missing from Debian. Builds in .build-static (SCRATCH_PATH for another).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-5}"
rounds="${2:-2}"

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v etcd >/dev/null || need+=(etcd-server)
command -v etcdctl >/dev/null || need+=(etcd-client)
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v valgrind >/dev/null || need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
  echo "bench: installing ${need[*]}" >&2
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq >/dev/null && $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi
# As the README installs it: the Swift runtime linked in, which halves a process's start.
sections="${BENCH_SECTIONS:-plain tls instructions process}"
has() { [[ " $sections " == *" $1 "* ]]; }
if [ -n "${DISCFG_BIN:-}" ]; then
  bin="$DISCFG_BIN"
else
  scratch="${SCRATCH_PATH:-.build-static}"
  swift build -c release --static-swift-stdlib --product discfg --scratch-path "$scratch" >&2
  bin="$scratch/release/discfg"
fi
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

export DISCFG_STORE="sqlite://$work/bench.db"
"$bin" create bench -f silent
"$bin" set bench /app/greeting "hello, world" -f silent
dp=$(free_port)
"$bin" serve --port "$dp" 2>"$work/serve.log" & pids+=($!); dpid=$!
ep=$(free_port); pp=$(free_port)
etcd --data-dir "$work/etcd" --enable-v2 --listen-client-urls "http://127.0.0.1:$ep" --advertise-client-urls "http://127.0.0.1:$ep" \
  --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
  --initial-cluster "default=http://127.0.0.1:$pp" >"$work/etcd.log" 2>&1 & pids+=($!); epid=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$dp/healthz" >/dev/null && curl -sf "http://127.0.0.1:$ep/health" >/dev/null && break
  sleep 0.1
done
curl -sf -o /dev/null -X PUT "http://127.0.0.1:$ep/v2/keys/app/greeting" -d value="hello, world"
etag=$(curl -si "http://127.0.0.1:$dp/v1/bench/keys/app/greeting" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag" {print $2}')

cat > "$work/put-discfg.lua" <<'LUA'
local keys = tonumber(os.getenv("BENCH_KEYS"))
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("PUT", "/v1/bench/keys/load/k" .. (counter % keys), nil, "value-" .. counter)
end
LUA
cat > "$work/put-etcd.lua" <<'LUA'
local keys = tonumber(os.getenv("BENCH_KEYS"))
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("PUT", "/v2/keys/load/k" .. (counter % keys), {["Content-Type"] = "application/x-www-form-urlencoded"}, "value=value-" .. counter)
end
LUA

# Milliseconds from wrk's latency figures (e.g. 412.00us, 1.20ms, 2.01s).
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n *= 1; else if (v ~ /s$/) n *= 1000; printf "%.2f", n }'; }
# A process's CPU time (user and system) in clock ticks, and the machine's ticks busy and in all
# (idle and waiting for the disk are not busy).
ticks_per_second=$(getconf CLK_TCK)
process_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }
# One load against the server with process id pid: prints "rps p50 p99 non2xx cpu busy", cpu
# being the server's CPU time per request in microseconds and busy the machine's share busy.
load() { # pid, connections, wrk args…
  local pid=$1 c=$2; shift 2
  local cpu0 busy0 all0 cpu1 busy1 all1
  cpu0=$(process_ticks "$pid"); read -r busy0 all0 <<<"$(machine_ticks)"
  wrk -t2 -c"$c" -d"${duration}s" --latency "$@" > "$work/wrk.txt" 2>&1 || true
  cpu1=$(process_ticks "$pid"); read -r busy1 all1 <<<"$(machine_ticks)"
  local rps p50 p99 bad requests
  rps=$(awk '/Requests\/sec/ {print int($2)}' "$work/wrk.txt")
  p50=$(to_ms "$(awk '$1=="50%" {print $2}' "$work/wrk.txt")")
  p99=$(to_ms "$(awk '$1=="99%" {print $2}' "$work/wrk.txt")")
  bad=$(awk '/Non-2xx/ {print $NF}' "$work/wrk.txt")
  requests=$(awk '/requests in/ {print $1}' "$work/wrk.txt")
  local cpu busy
  cpu=$(awk -v t=$((cpu1 - cpu0)) -v hz="$ticks_per_second" -v n="${requests:-0}" 'BEGIN { if (n > 0) printf "%.0f", t * 1000000 / hz / n; else print "-" }')
  busy=$(awk -v b=$((busy1 - busy0)) -v a=$((all1 - all0)) 'BEGIN { if (a > 0) printf "%.0f%%", 100 * b / a; else print "-" }')
  echo "${rps:-0} $p50 $p99 ${bad:-0} $cpu $busy"
}
metric() { curl -s "http://127.0.0.1:$dp/metrics" | awk -v m="$1" '$1==m {print $2}'; }

row() { # name, connections, round, discfg "rps p50 p99 bad cpu busy", etcd "rps p50 p99 bad cpu busy", extra
  local drps dp50 dp99 dbad dcpu dbusy erps ep50 ep99 ebad ecpu ebusy extra=$6
  read -r drps dp50 dp99 dbad dcpu dbusy <<<"$4"
  read -r erps ep50 ep99 ebad ecpu ebusy <<<"$5"
  [ "$dbad" = 0 ] || extra="$extra (discfg non-2xx: $dbad)"
  [ "$ebad" = 0 ] || extra="$extra (etcd non-2xx: $ebad)"
  ratio=$(awk -v a="$drps" -v b="$erps" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  p99ratio=$(awk -v a="$dp99" -v b="$ep99" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  printf "%-9s %5s %5s | %9s %8s %8s %5s %5s | %9s %8s %8s %5s %5s | %6s %6s | %s\n" "$1" "$2" "$3" \
    "$drps" "$dp50" "$dp99" "$dcpu" "$dbusy" "$erps" "$ep50" "$ep99" "$ecpu" "$ebusy" "$ratio" "$p99ratio" "$extra"
}

if has plain; then
echo "discfg serve (SQLite, access log on) beside etcd $(etcd --version 2>/dev/null | awk '/etcd Version/ {print $3}') (v2 API), $(nproc) cores, wrk -t2 ${duration}s per load, $rounds rounds"
printf "%-9s %5s %5s | %9s %8s %8s %5s %5s | %9s %8s %8s %5s %5s | %6s %6s | %s\n" load conns round \
  "discfg/s" p50ms p99ms cpuµs busy "etcd/s" p50ms p99ms cpuµs busy ratio p99÷ "discfg group commits"
for connections in 64 256; do
  for round in $(seq "$rounds"); do
    for name in GET GET-304 PUT-1 PUT-1000; do
      extra=""
      case $name in
        GET)
          d=$(load "$dpid" "$connections" "http://127.0.0.1:$dp/v1/bench/keys/app/greeting")
          e=$(load "$epid" "$connections" "http://127.0.0.1:$ep/v2/keys/app/greeting") ;;
        GET-304)
          d=$(load "$dpid" "$connections" -H "If-None-Match: $etag" "http://127.0.0.1:$dp/v1/bench/keys/app/greeting")
          e=$(load "$epid" "$connections" -H "If-None-Match: $etag" "http://127.0.0.1:$ep/v2/keys/app/greeting") ;;
        PUT-*)
          export BENCH_KEYS=${name#PUT-}
          commits=$(metric discfg_store_commits_total); changes=$(metric discfg_store_commit_changes_total); syncs=$(metric discfg_store_syncs_total)
          d=$(load "$dpid" "$connections" -s "$work/put-discfg.lua" "http://127.0.0.1:$dp")
          commits2=$(metric discfg_store_commits_total); changes2=$(metric discfg_store_commit_changes_total); syncs2=$(metric discfg_store_syncs_total)
          extra=$(awk -v c="${commits:-0}" -v c2="${commits2:-0}" -v x="${changes:-0}" -v x2="${changes2:-0}" -v y="${syncs:-0}" -v y2="${syncs2:-0}" -v s="$duration" \
            'BEGIN { n = c2 - c; if (n > 0) printf "%d commits/s, %d fsync/s, %.1f changes per commit", n / s, (y2 - y) / s, (x2 - x) / n; else print "-" }')
          e=$(load "$epid" "$connections" -s "$work/put-etcd.lua" "http://127.0.0.1:$ep") ;;
      esac
      row "$name" "$connections" "$round" "$d" "$e" "$extra"
    done
  done
done
echo "discfg batch sizes (changes per group commit, since start):"
curl -s "http://127.0.0.1:$dp/metrics" | awk '/^discfg_store_commit_batch_size_bucket/ { sub(/.*le="/, ""); sub(/"}/, ""); printf "  <= %s: %s\n", $1, $2 }'
fi

# Over TLS: the same store served again with a certificate, beside the plain server and
# beside a second etcd serving the same certificate; each row's ratio is TLS to etcd over
# TLS, and its last column discfg over TLS to discfg plain in the same round.
if has tls; then
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
  -keyout "$work/tls.key" -out "$work/tls.pem" 2>/dev/null
tp=$(free_port)
"$bin" serve --port "$tp" --tls-cert "$work/tls.pem" --tls-key "$work/tls.key" 2>"$work/serve-tls.log" & pids+=($!); tpid=$!
tep=$(free_port); tpp=$(free_port)
etcd --name tls --data-dir "$work/etcd-tls" --enable-v2 --cert-file "$work/tls.pem" --key-file "$work/tls.key" \
  --listen-client-urls "https://127.0.0.1:$tep" --advertise-client-urls "https://127.0.0.1:$tep" \
  --listen-peer-urls "http://127.0.0.1:$tpp" --initial-advertise-peer-urls "http://127.0.0.1:$tpp" \
  --initial-cluster "tls=http://127.0.0.1:$tpp" >"$work/etcd-tls.log" 2>&1 & pids+=($!); tepid=$!
for _ in $(seq 100); do
  curl -sfk "https://127.0.0.1:$tp/healthz" >/dev/null && curl -sfk "https://127.0.0.1:$tep/health" >/dev/null && break
  sleep 0.1
done
curl -sfk -o /dev/null -X PUT "https://127.0.0.1:$tep/v2/keys/app/greeting" -d value="hello, world"
echo "over TLS (RSA 2048, self-signed): discfg serve beside etcd $(etcd --version 2>/dev/null | awk '/etcd Version/ {print $3}') (v2 API) with the same certificate, wrk over https"
printf "%-9s %5s %5s | %9s %8s %8s %5s %5s | %9s %8s %8s %5s %5s | %6s %6s | %s\n" load conns round \
  "tls/s" p50ms p99ms cpuµs busy "etcd-tls/s" p50ms p99ms cpuµs busy ratio p99÷ "discfg plain/s, tls÷plain"
export BENCH_KEYS=1
for round in $(seq "$rounds"); do
  for name in GET PUT-1; do
    case $name in
      GET)
        t=$(load "$tpid" 64 "https://127.0.0.1:$tp/v1/bench/keys/app/greeting")
        p=$(load "$dpid" 64 "http://127.0.0.1:$dp/v1/bench/keys/app/greeting")
        e=$(load "$tepid" 64 "https://127.0.0.1:$tep/v2/keys/app/greeting") ;;
      PUT-1)
        t=$(load "$tpid" 64 -s "$work/put-discfg.lua" "https://127.0.0.1:$tp")
        p=$(load "$dpid" 64 -s "$work/put-discfg.lua" "http://127.0.0.1:$dp")
        e=$(load "$tepid" 64 -s "$work/put-etcd.lua" "https://127.0.0.1:$tep") ;;
    esac
    plain=$(awk -v t="${t%% *}" -v p="${p%% *}" 'BEGIN { if (p > 0) printf "%d, %.2f", p, t / p; else print "-" }')
    row "$name" 64 "$round" "$t" "$e" "$plain"
  done
done
fi
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true

if has instructions; then
# Instructions per request: the server under callgrind, instrumented only while a fixed
# number of requests is sent on one keep-alive connection; every thread counted (the
# access log is formatted on another one). Valgrind 3.19 cannot read the DWARF 5 of a
# Swift binary (so the copy measured has no debug info) and, in a program whose main
# thread waits in dispatch_main, faults on its sigsuspend (it writes to the signal mask
# it is given, which libdispatch keeps read-only): a preloaded sigsuspend hands it a
# copy.
requests=2000
strip -g -o "$work/discfg-nodebug" "$bin"
cat > "$work/sigsuspend.c" <<'C'
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
int sigsuspend(const sigset_t *mask) { sigset_t copy = *mask; return (int)syscall(SYS_rt_sigsuspend, &copy, 8); }
C
cc -shared -fPIC -O2 -o "$work/sigsuspend.so" "$work/sigsuspend.c"
cat > "$work/fixed.py" <<'PY'
# Each request leaves in one write, as wrk sends it: a request whose body came in a later
# read is left to the router, so http.client's two writes would make the count wobble.
import socket, sys
port, method, path, count = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
f = s.makefile("rb")
for i in range(count):
    body = f"value-{i}".encode() if method == "PUT" else b""
    head = f"{method} {path.replace('{i}', str(i % 1000))} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    if method == "PUT": head += f"Content-Length: {len(body)}\r\n"
    s.sendall(head.encode() + b"\r\n" + body)
    status = int(f.readline().split()[1]); length = 0
    while (line := f.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length": length = int(value)
    f.read(length)
    if status >= 300: sys.exit(f"{method} {path}: {status}")
PY
per_request() { # label, method, path, serve flags…
  local label=$1 method=$2 path=$3; shift 3
  local cp; cp=$(free_port)
  rm -f "$work"/callgrind.out.*
  LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.out.%p" \
    "$work/discfg-nodebug" serve --port "$cp" "$@" 2>"$work/callgrind.log" &
  local vp=$!
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$cp/healthz" >/dev/null && break; sleep 0.2; done
  python3 "$work/fixed.py" "$cp" "$method" "$path" 300   # warm: the view, caches, connection
  callgrind_control -z "$vp" >/dev/null 2>&1; callgrind_control -i on "$vp" >/dev/null 2>&1
  python3 "$work/fixed.py" "$cp" "$method" "$path" "$requests"
  callgrind_control -i off "$vp" >/dev/null 2>&1; callgrind_control -d "$vp" >/dev/null 2>&1
  sleep 1; kill "$vp"; wait "$vp" 2>/dev/null || true
  local total
  total=$(for f in "$work"/callgrind.out.*; do callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; done | sort -n | tail -1)
  printf "  %-40s %8d\n" "$label" $(( ${total:-0} / requests ))
}
echo "discfg instructions per request (callgrind, $requests requests on one connection, all threads):"
per_request "GET one key (access log on)" GET /v1/bench/keys/app/greeting
per_request "GET one key (--log-level error)" GET /v1/bench/keys/app/greeting --log-level error
per_request "GET one key (--read-views off)" GET /v1/bench/keys/app/greeting --read-views off
per_request "PUT, 1,000 keys (access log on)" PUT '/v1/bench/keys/load/k{i}'
fi

if has process; then
echo "a read as a process: discfg get (embedded store) beside etcdctl get (v3 API):"
ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:$ep" put /app/greeting "hello, world" >/dev/null
hyperfine -N --warmup 5 --runs 50 \
  "$bin get bench /app/greeting" \
  "etcdctl --endpoints http://127.0.0.1:$ep get /app/greeting"
fi
