"""A put/range load on an etcd v3 endpoint: one gRPC channel (grpcio's asyncio API, with
the message classes aetcd ships), many requests in flight. The same client runs against
discfg and against etcd, so their ratio is the servers'; grpcio's own cost keeps it
below about 15,000 requests a second on the 2-core machine this was written on.
Prints one line per load: requests/s, p50 and p99 in milliseconds, and, given the
server's process id, the CPU time it spent per request (user and system, from /proc),
the steadiest figure on a busy machine, beside the CPU time this client spent per
request (the server and its client share the machine's cores, so what a server's
answers cost the client counts too). LOADS names the loads to run, comma-separated
(put, range, prefix; all three by default).

usage: etcd_load.py PORT [seconds] [concurrency] [server-pid] [loads]
       etcd_load.py PORT --puts COUNT [concurrency]   (exactly COUNT puts, nothing printed:
                                                       for counting instructions per put)
"""

import asyncio
import os
import sys
import time

import grpc
import aetcd.rpc as rpc


async def run(seconds, concurrency, request):
    latencies = []
    deadline = time.monotonic() + seconds

    async def worker(number):
        index = 0
        while time.monotonic() < deadline:
            start = time.perf_counter()
            await request(number, index)
            latencies.append(time.perf_counter() - start)
            index += 1

    started = time.monotonic()
    await asyncio.gather(*(worker(number) for number in range(concurrency)))
    elapsed = time.monotonic() - started
    latencies.sort()

    def at(share):
        return latencies[min(len(latencies) - 1, int(len(latencies) * share))] * 1000
    return len(latencies) / elapsed, at(0.5), at(0.99)


def cpu_seconds(pid):
    """User and system CPU time of process `pid` so far, or None without one."""
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main(port, seconds, concurrency, pid, loads):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        put_call = channel.unary_unary("/etcdserverpb.KV/Put")
        range_call = channel.unary_unary("/etcdserverpb.KV/Range")
        value = b"v" * 256
        puts = [rpc.PutRequest(key=b"bench/%04d" % index, value=value).SerializeToString() for index in range(1000)]
        gets = [rpc.RangeRequest(key=b"bench/%04d" % index).SerializeToString() for index in range(1000)]
        prefix = rpc.RangeRequest(key=b"bench/00", range_end=b"bench/01").SerializeToString()
        # 1,000 keys of 256 bytes, written before the put load (or reads that find them
        # missing), then overwritten and read at random.
        if "put" in loads or not rpc.RangeResponse.FromString(await range_call(gets[-1])).kvs:
            for request in puts:
                await put_call(request)

        async def put(number, index):
            await put_call(puts[(number * 7919 + index) % 1000])

        async def get(number, index):
            await range_call(gets[(number * 7919 + index) % 1000])

        async def get_prefix(number, index):
            await range_call(prefix)

        named = {"put": ("put", put), "range": ("range (one key)", get), "prefix": ("range (prefix, 100 keys)", get_prefix)}
        for name, request in (named[load] for load in loads):
            before, client_before = cpu_seconds(pid), cpu_seconds(os.getpid())
            rate, p50, p99 = await run(seconds, concurrency, request)
            after, client_after = cpu_seconds(pid), cpu_seconds(os.getpid())
            per_request = lambda spent: spent / (rate * seconds) * 1e6
            cpu = f"   cpu {per_request(after - before):6.0f} us/req" if before is not None else ""
            client = f"   client cpu {per_request(client_after - client_before):6.0f} us/req"
            print(f"{name:26} {rate:9.0f} req/s   p50 {p50:7.2f} ms   p99 {p99:7.2f} ms{cpu}{client}")


async def fixed_puts(port, count, concurrency):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        put_call = channel.unary_unary("/etcdserverpb.KV/Put")
        value = b"v" * 256
        puts = [rpc.PutRequest(key=b"bench/%04d" % index, value=value).SerializeToString() for index in range(1000)]
        numbers = iter(range(count))

        async def worker():
            for number in numbers:
                await put_call(puts[(number * 7919) % 1000])

        await asyncio.gather(*(worker() for _ in range(concurrency)))


if len(sys.argv) > 3 and sys.argv[2] == "--puts":
    asyncio.run(fixed_puts(int(sys.argv[1]), int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 8))
    sys.exit(0)
loads = sys.argv[5].split(",") if len(sys.argv) > 5 else ["put", "range", "prefix"]
if not set(loads) <= {"put", "range", "prefix"}:
    sys.exit(f"etcd_load.py: loads are put, range and prefix, not {sys.argv[5]}")
asyncio.run(main(
    int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 10, int(sys.argv[3]) if len(sys.argv) > 3 else 32,
    int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None, loads,
))
