"""The etcd API as a maintained Python client library sees it: aetcd (PyPI), used as its
README shows, against `discfg serve --etcd` on the port given. Prints one line per step;
exits non-zero on the first answer that is not etcd's."""

import asyncio
import sys

import aetcd


def expect(what, actual, wanted):
    if actual != wanted:
        print(f"FAIL {what}: got {actual!r}, wanted {wanted!r}")
        sys.exit(1)
    print(f"ok {what}")


async def main(port: int) -> None:
    async with aetcd.Client(host="127.0.0.1", port=port) as client:
        await client.put(b"foo", b"bar")
        got = await client.get(b"foo")
        expect("get", (got.value, got.version), (b"bar", 1))

        await client.put(b"dir/a", b"1")
        await client.put(b"dir/b", b"2")
        expect("get_prefix", [kv.key for kv in await client.get_prefix(b"dir/")], [b"dir/a", b"dir/b"])

        ok, _ = await client.transaction(
            compare=[client.transactions.value(b"foo") == b"bar"],
            success=[client.transactions.put(b"foo", b"baz")],
            failure=[],
        )
        expect("transaction", (ok, (await client.get(b"foo")).value), (True, b"baz"))
        ok, _ = await client.transaction(
            compare=[client.transactions.version(b"foo") == 1],
            success=[client.transactions.put(b"foo", b"never")],
            failure=[client.transactions.put(b"lost", b"yes")],
        )
        expect("failed transaction", (ok, (await client.get(b"lost")).value), (False, b"yes"))

        # As aetcd's test_nested_transactions: a txn in a txn's success, its put and the
        # outer one made together; the nested answer is a response_txn of its own.
        ok, responses = await client.transaction(
            compare=[],
            success=[
                client.transactions.put(b"/doot/txn1", b"1"),
                client.transactions.txn(
                    compare=[client.transactions.version(b"/doot/txn1") == 0],
                    success=[client.transactions.put(b"/doot/txn2", b"2")],
                    failure=[client.transactions.put(b"/doot/txn2", b"never")],
                ),
            ],
            failure=[],
        )
        nested = responses[1].response_txn
        expect("nested transaction", (ok, nested.succeeded, len(nested.responses)), (True, True, 1))
        one, two = await client.get(b"/doot/txn1"), await client.get(b"/doot/txn2")
        expect("nested transaction's puts", (one.value, two.value, one.mod_revision == two.mod_revision), (b"1", b"2", True))

        lease = await client.lease(30)
        await client.put(b"leased", b"x", lease=lease)
        expect("lease", (await lease.granted_ttl(), await lease.keys()), (30, [b"leased"]))
        await lease.refresh()
        await lease.revoke()
        expect("revoked lease's key", await client.get(b"leased"), None)

        watch = await client.watch_prefix(b"dir/")
        await client.put(b"dir/c", b"3")
        async for event in watch:
            expect("watch", (str(event.kind), event.kv.key, event.kv.value), ("PUT", b"dir/c", b"3"))
            break
        await watch.cancel()

        await client.delete_prefix(b"dir/")
        expect("delete_prefix", [kv.key for kv in await client.get_prefix(b"dir/")], [])
        members = [member async for member in client.members()]
        expect("members", len(members), 1)
        print("done")


asyncio.run(main(int(sys.argv[1])))
