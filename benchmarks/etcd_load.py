"""A put/range load on an etcd v3 endpoint, through aetcd (one gRPC channel, many
concurrent requests): the same client against discfg and against etcd, so their ratio is
the servers'. Prints one line per load: requests/s, p50 and p99 in milliseconds.

usage: etcd_load.py PORT [seconds] [concurrency]
"""

import asyncio
import sys
import time

import aetcd


async def run(client, seconds, concurrency, request):
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


async def main(port, seconds, concurrency):
    async with aetcd.Client(host="127.0.0.1", port=port) as client:
        value = b"v" * 256
        # 1,000 keys of 256 bytes, written once, then overwritten and read at random.
        for index in range(1000):
            await client.put(b"bench/%04d" % index, value)

        async def put(number, index):
            await client.put(b"bench/%04d" % ((number * 7919 + index) % 1000), value)

        async def get(number, index):
            await client.get(b"bench/%04d" % ((number * 7919 + index) % 1000))

        async def get_prefix(number, index):
            await client.get_prefix(b"bench/00")

        for name, request in (("put", put), ("range (one key)", get), ("range (prefix, 100 keys)", get_prefix)):
            rate, p50, p99 = await run(client, seconds, concurrency, request)
            print(f"{name:26} {rate:9.0f} req/s   p50 {p50:7.2f} ms   p99 {p99:7.2f} ms")


asyncio.run(main(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 10, int(sys.argv[3]) if len(sys.argv) > 3 else 32))
