#!/usr/bin/env bash
# What secrets cost: sealing and opening per value (discfg-secrets-bench), and how long
# `discfg exec` takes to start a command on the embedded store, beside `env FOO=… true`
# (hyperfine, installed from Debian if missing).
# Usage: benchmarks/secrets.sh [seal-runs]   (env SCRATCH_PATH to build elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${SCRATCH_PATH:-.build}"
scripts/setup
swift build -c release --scratch-path "$scratch" --product discfg
swift build -c release --scratch-path "$scratch" --product discfg-secrets-bench
"$scratch/release/discfg-secrets-bench" "${1:-20000}"

if ! command -v hyperfine >/dev/null; then
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq hyperfine
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export HOME="$work" DISCFG_STORE="sqlite://$work/bench.db"
discfg="$scratch/release/discfg"
"$discfg" key init >/dev/null
"$discfg" create bench --encryption "file://$work/.config/discfg/keys/default.key" >/dev/null
for i in $(seq 1 20); do "$discfg" set bench "app/key$i" "value-$i" >/dev/null; done
for i in $(seq 1 5); do "$discfg" set bench "app/secret$i" "secret-$i" --secret >/dev/null; done
hyperfine -N --warmup 10 --runs 100 \
  "env FOO=bar true" \
  "$discfg exec bench --prefix /app -- true"
