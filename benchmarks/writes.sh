#!/usr/bin/env bash
# What checking a change costs on the write path, in instructions per write (valgrind
# --tool=callgrind, every thread), which do not wobble on a busy machine: a set of a
# 40-member JSON value with no schema, with a 40-property schema on the key, with a schema
# on its prefix's document, and a merge patch and a JSON patch of one member. Each figure is
# the difference between N and 1 writes, divided by N - 1, so start-up is left out.
# Usage: benchmarks/writes.sh [N] [sqlite | memory]        (default 201 sqlite)
# Builds discfg-write-bench in release (SCRATCH_PATH, default .build-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-201}"
store="${2:-sqlite}"
scratch="${SCRATCH_PATH:-.build-bench}"
command -v valgrind >/dev/null || { echo "writes.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
swift build -c release --scratch-path "$scratch" --product discfg-write-bench >/dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Valgrind 3.19 cannot read the DWARF 5 of a Swift binary (the copy measured has none), and
# faults on the sigsuspend of a program whose main thread waits in dispatch_main (it writes
# to the mask it is given, which libdispatch keeps read-only): a preloaded sigsuspend hands
# it a copy.
strip -g -o "$work/bench" "$scratch/release/discfg-write-bench"
cat > "$work/sigsuspend.c" <<'C'
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
int sigsuspend(const sigset_t *mask) { sigset_t copy = *mask; return (int)syscall(SYS_rt_sigsuspend, &copy, 8); }
C
cc -shared -fPIC -O2 -o "$work/sigsuspend.so" "$work/sigsuspend.c"
count() {
  LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind --callgrind-out-file="$work/out.%p" "$work/bench" "$1" "$2" "$store" >/dev/null 2>"$work/log"
  local total=0
  for f in "$work"/out.*; do
    total=$(( total + $(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}') ))
  done
  rm -f "$work"/out.*
  echo "$total"
}
echo "instructions per write on $store (callgrind, every thread, ($runs - 1) writes)"
plain=0
for mode in plain validated prefix patch json-patch; do
  one=$(count "$mode" 1)
  many=$(count "$mode" "$runs")
  per=$(( (many - one) / (runs - 1) ))
  [ "$mode" = plain ] && plain=$per
  printf '%-11s %9d  %5s x plain\n' "$mode" "$per" "$(python3 -c "print(f'{$per / $plain:.2f}')")"
done
