"""The etcd API's edges, as an attacker sends them: numbers at 0, -1 and 2^63-1 (int64's
largest; 2^63 and 2^64 do not fit the wire's int64), request bytes that are not a
message, a message over the size limit, an unknown method. Run against an endpoint, it
prints one line per case, `case: CODE` (the gRPC status, OK for success, with the TTL a
lease grant got), so the same
run against etcd and against discfg can be compared line by line.

usage: grpc_edges.py PORT
"""

import sys

import grpc
import aetcd.rpc as rpc

BIG = 2**63 - 1


def main(port):
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")

    def call(name, method, request, raw=None, shown=None):
        """`shown` turns the answer's bytes into what the line shows besides OK."""
        stub = channel.unary_unary(method)
        try:
            answer = stub(raw if raw is not None else request.SerializeToString(), timeout=20)
            print(f"{name}: OK{shown(answer) if shown else ''}", flush=True)
        except grpc.RpcError as error:
            print(f"{name}: {error.code().name}", flush=True)

    kv = "/etcdserverpb.KV/"
    call("put", kv + "Put", rpc.PutRequest(key=b"edge", value=b"v"))
    for value in (0, -1, BIG):
        call(f"range limit {value}", kv + "Range", rpc.RangeRequest(key=b"edge", limit=value))
        call(f"range revision {value}", kv + "Range", rpc.RangeRequest(key=b"edge", revision=value))
        call(f"range min_mod_revision {value}", kv + "Range", rpc.RangeRequest(key=b"edge", range_end=b"\0", min_mod_revision=value))
        call(f"range max_create_revision {value}", kv + "Range", rpc.RangeRequest(key=b"edge", range_end=b"\0", max_create_revision=value))
        call(f"put lease {value}", kv + "Put", rpc.PutRequest(key=b"edge", value=b"v", lease=value))
        call(f"compact {value}", kv + "Compact", rpc.CompactionRequest(revision=value))
        compare = rpc.Compare(key=b"edge", target=rpc.Compare.MOD, result=rpc.Compare.LESS, mod_revision=value)
        call(f"txn compare mod_revision {value}", kv + "Txn", rpc.TxnRequest(compare=[compare]))
        # The TTL granted too: etcd raises a short one to its minimum.
        call(f"lease grant ttl {value}", "/etcdserverpb.Lease/LeaseGrant", rpc.LeaseGrantRequest(TTL=value),
             shown=lambda answer: f" TTL {rpc.LeaseGrantResponse.FromString(answer).TTL}")
        call(f"lease grant id {value}", "/etcdserverpb.Lease/LeaseGrant", rpc.LeaseGrantRequest(TTL=60, ID=value))
        call(f"lease revoke {value}", "/etcdserverpb.Lease/LeaseRevoke", rpc.LeaseRevokeRequest(ID=value))
        call(f"lease timetolive {value}", "/etcdserverpb.Lease/LeaseTimeToLive", rpc.LeaseTimeToLiveRequest(ID=value))
    call("range of no key", kv + "Range", rpc.RangeRequest())
    call("range bytes that are no message", kv + "Range", None, raw=b"\xff\xff\xff\xff\xff")
    call("put over the size limit", kv + "Put", rpc.PutRequest(key=b"big", value=b"x" * (5 << 20)))
    call("unknown method", "/etcdserverpb.KV/Explode", rpc.RangeRequest(key=b"edge"))
    call("unknown service", "/etcdserverpb.Auth/AuthEnable", rpc.AuthEnableRequest())
    # Nested transactions: 16 deep (discfg's bound) served by both, 17 by etcd alone; a
    # key put in a transaction and again in one nested in it refused by both; two
    # thousand deep, sent as bytes, refused by both ("too many operations").
    deep = rpc.TxnRequest(success=[rpc.RequestOp(request_put=rpc.PutRequest(key=b"nested", value=b"v"))])
    for _ in range(15):
        deep = rpc.TxnRequest(success=[rpc.RequestOp(request_txn=deep)])
    call("txn nested 16 deep", kv + "Txn", deep)
    call("txn nested 17 deep", kv + "Txn", rpc.TxnRequest(success=[rpc.RequestOp(request_txn=deep)]))
    twice = rpc.TxnRequest(success=[rpc.RequestOp(request_put=rpc.PutRequest(key=b"nested", value=b"1")),
                                    rpc.RequestOp(request_txn=rpc.TxnRequest(success=[rpc.RequestOp(request_put=rpc.PutRequest(key=b"nested", value=b"2"))]))])
    call("txn nested, a key put twice", kv + "Txn", twice)

    def delimited(field, body):
        length, head = len(body), bytes([field << 3 | 2])
        while length >= 0x80:
            head += bytes([length & 0x7F | 0x80])
            length >>= 7
        return head + bytes([length]) + body

    bomb = b""
    for _ in range(2000):
        bomb = delimited(2, delimited(4, bomb))
    call("txn nested 2000 deep", kv + "Txn", None, raw=bomb)
    call("range after all of it", kv + "Range", rpc.RangeRequest(key=b"edge"))


main(int(sys.argv[1]))
