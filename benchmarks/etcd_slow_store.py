"""Two `discfg serve --etcd` on one DynamoDB table served by moto one request at a time
(a slow store), and CLIENTS etcd clients (aetcd) putting and getting through both for
SECONDS: how many calls each status answered. No token is ever created, so every
UNAVAILABLE is the server refusing calls because its token-state read waited behind the
clients' own requests, not because of the load itself.

usage: etcd_slow_store.py BINARY [seconds] [clients]
"""

import asyncio
import collections
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

import aetcd

SERIALIZED_MOTO = """
import sys, threading
from moto.moto_server import werkzeug_app
lock = threading.Lock()
handle = werkzeug_app.DomainDispatcherApplication.__call__
def serialized(self, environ, start_response):
    with lock:
        return handle(self, environ, start_response)
werkzeug_app.DomainDispatcherApplication.__call__ = serialized
from moto.server import main
main(sys.argv[1:])
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise SystemExit(f"etcd_slow_store.py: {what} did not start within {timeout} s")


def answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


async def load(ports, seconds, clients):
    counts = collections.Counter()
    samples = {}
    deadline = time.monotonic() + seconds

    async def worker(number):
        client = aetcd.Client(host="127.0.0.1", port=ports[number % len(ports)], timeout=30)
        async with client:
            index = 0
            while time.monotonic() < deadline:
                key = f"load/{number}/{index % 16}".encode()
                try:
                    if random.random() < 0.5:
                        await client.put(key, str(index).encode())
                    else:
                        await client.get(key)
                    counts["OK"] += 1
                except Exception as error:  # each failure counted by its kind
                    unknown = "requires tokens" in str(error) or "token state" in str(error)
                    kind = "refused: token state unknown" if unknown else type(error).__name__
                    counts[kind] += 1
                    samples.setdefault(kind, str(error)[:200])
                index += 1

    await asyncio.gather(*(worker(number) for number in range(clients)))
    return counts, samples


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 120
    clients = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    work = tempfile.mkdtemp(prefix="discfg-slow-store-")
    processes = []
    environment = dict(os.environ, AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="discfg-bench",
                       AWS_EC2_METADATA_DISABLED="true", HOME=work)
    try:
        moto_port = free_port()
        processes.append(subprocess.Popen([sys.executable, "-c", SERIALIZED_MOTO, "-p", str(moto_port)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(lambda: answers(moto_port), 60, "moto_server")
        store = f"dynamodb://us-east-1/slow-store?endpoint=http://127.0.0.1:{moto_port}"
        subprocess.run([binary, "init", "--store", store], env=environment, check=True, capture_output=True)
        ports = []
        for _ in range(2):
            port = free_port()
            log = open(os.path.join(work, f"serve-{port}.log"), "w")
            processes.append(subprocess.Popen(
                [binary, "serve", "--store", store, "--port", "0", "--log-level", "error", "--etcd", f"127.0.0.1:{port}"],
                env=environment, stdout=subprocess.DEVNULL, stderr=log))
            wait_for(lambda: answers(port), 60, "serve --etcd")
            ports.append(port)
        started = time.monotonic()
        counts, samples = asyncio.run(load(ports, seconds, clients))
        elapsed = time.monotonic() - started
        total = sum(counts.values())
        failed = total - counts["OK"]
        detail = ", ".join(f"{name} {count}" for name, count in counts.most_common())
        print(f"{clients} clients, {elapsed:.0f} s, two servers on one table: {failed} of {total} calls failed ({detail})")
        for kind, sample in samples.items():
            print(f"  {kind}: {sample}")
    finally:
        for process in reversed(processes):
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
