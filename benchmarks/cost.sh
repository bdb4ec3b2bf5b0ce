#!/usr/bin/env bash
# What reads, writes and following a config cost on AWS, as a markdown table: request counts
# and capacity units measured on moto_server (discfg-bench --json, and discfg-agent-sim --json
# for the agents) times AWS's published on-demand prices (us-east-1, listed below with the
# date they were read). Nothing here is billed; moto answers every call.
# Usage: benchmarks/cost.sh [AGENTS_JSON]
#   AGENTS_JSON: the output of `discfg-agent-sim --json` (benchmarks/agents.sh writes one);
#   without it a short run (50 agents, 2 minutes) is measured here.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
swift build --product discfg-bench >/dev/null
swift build --product discfg-agent-sim >/dev/null
bin="$(swift build --show-bin-path)"
"$bin/discfg-bench" --json 20 > "$work/bench.json"
if [ -n "${1:-}" ]; then cp "$1" "$work/agents.json"
else "$bin/discfg-agent-sim" --agents 50 --minutes 2 --json > "$work/agents.json"; fi
python3 - "$work/bench.json" "$work/agents.json" <<'PY'
import json, sys
bench = {row["operation"]: row for row in json.load(open(sys.argv[1]))}
sim = json.load(open(sys.argv[2]))

# Prices, us-east-1, read 2026-11-26 (DynamoDB and API Gateway checked against the pricing
# pages' figures as quoted in 2025; the others are the last published figures we know).
PRICES = {
    "DynamoDB on-demand, per read request unit": 0.125 / 1e6,   # $0.125 per million RRU (since Nov 2024)
    "DynamoDB on-demand, per write request unit": 0.625 / 1e6,  # $0.625 per million WRU (since Nov 2024)
    "API Gateway HTTP API, per request": 1.00 / 1e6,           # $1.00 per million, first 300 million a month
    "Lambda, per request": 0.20 / 1e6,                         # $0.20 per million requests
    "Lambda, per GB-second (x86)": 0.0000166667,
    "S3 Standard, per GET": 0.0004 / 1000,                     # $0.0004 per 1,000 GET (a 304 is a GET)
    "S3 Standard, per PUT": 0.005 / 1000,                      # $0.005 per 1,000 PUT
    "CloudFront, per HTTPS request (US)": 0.0100 / 10000,      # $0.0100 per 10,000 HTTPS requests
    "AppConfig, per configuration request": 0.0000002,         # $0.2 per million GetLatestConfiguration
    "AppConfig, per configuration received": 0.0008,
    "SSM Parameter Store, per API call (higher throughput)": 0.05 / 10000,  # standard throughput: free
    "Secrets Manager, per secret-month": 0.40,
    "Secrets Manager, per API call": 0.05 / 10000,
}
P = lambda name: PRICES[name]
RRU, WRU = P("DynamoDB on-demand, per read request unit"), P("DynamoDB on-demand, per write request unit")
# The Lambda behind API Gateway: 256 MB (deploy/template.yaml), an assumed 10 ms billed per request.
LAMBDA = P("Lambda, per request") + 0.25 * 0.010 * P("Lambda, per GB-second (x86)")
API = P("API Gateway HTTP API, per request") + LAMBDA

def table_cost(row):
    return row["rcu"] * RRU + row["wcu"] * WRU

print("## Prices (us-east-1, read 2026-11-26)\n")
print("| item | price |\n|---|---:|")
for name, price in PRICES.items():
    print(f"| {name} | ${price * 1e6:.4g} per million |" if price < 0.0001 else f"| {name} | ${price:g} |")

print("\n## Per million operations (measured units × prices)\n")
print("| operation | RRU | WRU | on the table | via API Gateway + Lambda |\n|---|---:|---:|---:|---:|")
for name in ["get (100 B value)", "get (4 KB value)", "set (update, 100 B)", "set (new key, 100 B)", "set (update, 4 KB)", "delete", "list (10 keys)", "export", "watch poll (no change)"]:
    row = bench[name]
    direct = table_cost(row) * 1e6
    print(f"| {name} | {row['rcu']:g} | {row['wcu']:g} | ${direct:.2f} | ${direct + API * 1e6:.2f} |")

# The day: 1,000 services, 100 changes, each service starting 4 times, agents and pollers at 15 s.
SERVICES, CHANGES, STARTS, INTERVAL = 1000, 100, 4, 15
checks = 86400 / INTERVAL
hours = sim["seconds"] / 3600
check_rru = bench["config info"]["rcu"]                      # one eventually consistent GetItem of the meta item
sim_checks = sim["checksPerAgentHour"] * hours * sim["agents"]
change_rru = (sim["rcu"] - sim_checks * check_rru) / sim["agents"] / max(sim["writes"], 1)
change_requests = sim["eventReadsPerChangePerAgent"]
export = bench["export"]
startup = STARTS * table_cost(export)
rows = []
polls = 86400 / 0.5                                        # DynamoDBStore's watch polls every 0.5 s
direct = polls * table_cost(bench["watch poll (no change)"]) + CHANGES * change_rru * RRU + startup
rows.append(("table, each service watching it (poll every 0.5 s)", polls * bench["watch poll (no change)"]["roundTrips"], direct, "measured"))
agent = checks * check_rru * RRU + CHANGES * change_rru * RRU + startup
rows.append((f"discfg agent, one per service, every {INTERVAL} s", checks + CHANGES * change_requests, agent, "measured"))
s3 = (checks + STARTS) * P("S3 Standard, per GET")
rows.append((f"S3 snapshot, conditional GET every {INTERVAL} s", checks + STARTS, s3, "computed"))
cloudfront = (checks + STARTS) * P("CloudFront, per HTTPS request (US)")
rows.append((f"S3 + CloudFront, GET every {INTERVAL} s (edge hits)", checks + STARTS, cloudfront, "computed"))
appconfig = checks * P("AppConfig, per configuration request") + (CHANGES + STARTS) * P("AppConfig, per configuration received")
rows.append((f"AppConfig, GetLatestConfiguration every {INTERVAL} s", checks, appconfig, "price list"))
rows.append(("SSM Parameter Store standard (40 TPS cap: 1,000 × 1/15 s = 67 TPS exceeds it)", checks, 0.0, "price list"))
ssm = checks * P("SSM Parameter Store, per API call (higher throughput)")
rows.append((f"SSM Parameter Store higher throughput, GetParameter every {INTERVAL} s", checks, ssm, "price list"))
secrets = checks * P("Secrets Manager, per API call") + P("Secrets Manager, per secret-month") / 30 / SERVICES
rows.append((f"Secrets Manager, GetSecretValue every {INTERVAL} s (one secret)", checks, secrets, "price list"))
publish = CHANGES * P("S3 Standard, per PUT")
print(f"\n## 1,000 services for a day: {CHANGES} changes, {STARTS} start-ups each (start-up read = one export, {table_cost(export) * 1e6:.3g} µ$)\n")
print("| how services follow the config | requests per service per day | $ per day, 1,000 services | counts |\n|---|---:|---:|---|")
for name, requests, cost, how in rows:
    print(f"| {name} | {requests:,.0f} | ${cost * SERVICES:,.2f} | {how} |")
print(f"\nWriting the {CHANGES} changes: ${CHANGES * table_cost(bench['set (update, 100 B)']):.6f} on the table; publishing each to S3 adds ${publish:.4f}.")
print(f"Agents measured: {sim['agents']} agents, {sim['writes']} changes in {sim['seconds']:.0f} s: {sim['checksPerAgentHour']:.1f} checks per agent-hour at {sim['interval']:g} s, "
      f"{change_requests:.2f} table requests and {change_rru:.2f} RRU per change per agent beyond the checks; check = {check_rru:g} RRU.")
PY
