#!/usr/bin/env python3
"""OpenStack's etcd3gw client against etcd's HTTP/JSON gateway on PORT.

    etcd3gw_check.py PORT

Discovers the API path from /version, then: status and members; put, get, get_prefix,
create, replace, delete; a lease with a key, refreshed, its TTL and keys read, revoked
(the key goes with it); a lock; a watch that sees a put and a delete, and a prefix
watch; a transaction. Prints each step; exits 1 at the first that fails.
"""
import sys
import threading
import time

import etcd3gw


def check(condition, what):
    if not condition:
        print("FAILED: " + what)
        sys.exit(1)
    print("ok: " + what)


def main(port):
    client = etcd3gw.client(host="127.0.0.1", port=port, timeout=30)
    check(client.api_path == "/v3/", "the API path from /version: %s" % client.api_path)
    status = client.status()
    check(status["version"].startswith("3."), "status: %s" % status.get("version"))
    members = client.members()
    check(len(members) == 1, "one member")
    # etcd3gw's own functional test reads it unguarded.
    check(members[0]["peerURLs"], "the member's peer URLs: %s" % members[0].get("peerURLs"))

    check(client.put("gw3/a", "alpha"), "put")
    check(client.get("gw3/a") == [b"alpha"], "get")
    check(client.put("gw3/b", b"\x00\xffbinary"), "put binary")
    check(sorted(client.get_prefix("gw3/")) == sorted([(b"alpha", client.get("gw3/a", metadata=True)[0][1]), (b"\x00\xffbinary", client.get("gw3/b", metadata=True)[0][1])]), "get_prefix")
    check(client.create("gw3/c", "first"), "create a new key")
    check(not client.create("gw3/c", "second"), "create an existing key fails")
    check(client.replace("gw3/c", "first", "third"), "replace the value held")
    check(not client.replace("gw3/c", "first", "fourth"), "replace another value fails")
    check(client.get("gw3/c") == [b"third"], "the replaced value")
    check(client.delete("gw3/c"), "delete")
    check(not client.delete("gw3/c"), "delete again deletes nothing")
    check(client.get("gw3/missing") == [], "get a missing key")

    lease = client.lease(ttl=30)
    check(lease.id != 0, "lease granted: %s" % lease.id)
    check(client.put("gw3/leased", "held", lease=lease), "put with the lease")
    check(lease.refresh() == 30, "refresh")
    check(0 < lease.ttl() <= 30, "ttl")
    check(lease.keys() == [b"gw3/leased"], "the lease's keys: %s" % lease.keys())
    check(lease.revoke(), "revoke")
    check(client.get("gw3/leased") == [], "the leased key went with the lease")

    lock = client.lock(id="gw3-lock", ttl=30)
    check(lock.acquire(), "lock acquired")
    check(lock.is_acquired(), "lock held")
    check(lock.release(), "lock released")

    events, cancel = client.watch("gw3/w")
    seen = []

    def read():
        for event in events:
            seen.append(event)
            if len(seen) == 2:
                break

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(1)
    client.put("gw3/w", "watched")
    client.delete("gw3/w")
    reader.join(30)
    cancel()
    check(len(seen) == 2, "watch saw %d events" % len(seen))
    check(seen[0]["kv"]["value"] == b"watched" and seen[0].get("type", "PUT") == "PUT", "the put: %s" % seen[0])
    check(seen[1].get("type") == "DELETE", "the delete: %s" % seen[1])

    prefix_events, prefix_cancel = client.watch_prefix("gw3/p/")
    prefixed = []
    reader = threading.Thread(target=lambda: prefixed.append(next(iter(prefix_events))), daemon=True)
    reader.start()
    time.sleep(1)
    client.put("gw3/p/one", "1")
    reader.join(30)
    prefix_cancel()
    check(len(prefixed) == 1 and prefixed[0]["kv"]["key"] == b"gw3/p/one", "prefix watch: %s" % prefixed)

    txn = client.transaction({
        "compare": [{"key": etcd3gw.utils._encode(b"gw3/a"), "result": "EQUAL", "target": "VALUE", "value": etcd3gw.utils._encode(b"alpha")}],
        "success": [{"request_put": {"key": etcd3gw.utils._encode(b"gw3/a"), "value": etcd3gw.utils._encode(b"omega")}}],
        "failure": [],
    })
    check(txn.get("succeeded") is True, "transaction: %s" % txn)
    check(client.get("gw3/a") == [b"omega"], "the transaction's put")
    print("etcd3gw: all passed")


if __name__ == "__main__":
    main(int(sys.argv[1]))
