"""Attacks on the etcd API's services, as an anonymous client sends them, each with
bounded load. Run against an endpoint with one of the modes below; it prints one line
per finding, `name: value`, for the Swift tests (Tests/CLITests/EtcdBoundsTests.swift)
to check.

usage: etcd_bounds.py MODE PORT [ARGUMENT]

modes:
  foreign    keys the config holds from other writers (REST, the CLI): /db/password
             and /b/x must be there. Binary search over a range's LESS compares, a
             range, a count and a DeleteRange over ["a", "e") (with one etcd key, "c").
  budget     32 values of 256 KiB under "big/" (8 MiB), then ranges over them and one
             1,280-byte Txn of 128 whole-keyspace ranges.
  txn-decode a 4 MiB Txn of two million empty compares.
  watchers   one stream asks for 1,000 watchers; then another connection asks for one.
  leases N   grants N leases and one more.
  token-watch a watcher opened before tokens exist: prints `watching` once created, then
             how its stream ended once the caller (who writes a key meanwhile) creates
             a token.
"""

import sys
import threading
import queue

import grpc
import aetcd.rpc as rpc

KV = "/etcdserverpb.KV/"


def unary(channel, method, request, response_type, timeout=60):
    """The decoded answer, or the error's gRPC status name and message."""
    try:
        answer = channel.unary_unary(method)(request if isinstance(request, bytes) else request.SerializeToString(), timeout=timeout)
        return response_type.FromString(answer), None
    except grpc.RpcError as error:
        return None, f"{error.code().name} {error.details()}"


def foreign(channel):
    # One etcd key in ["a", "e"), beside the foreign /b/x.
    unary(channel, KV + "Put", rpc.PutRequest(key=b"c", value=b"etcd"), rpc.PutResponse)
    answers = []
    for probe in (b"", b"h", b"hunter2", b"i", b"\xff"):
        compare = rpc.Compare(key=b"db", range_end=b"dc", target=rpc.Compare.VALUE, result=rpc.Compare.LESS, value=probe)
        answer, error = unary(channel, KV + "Txn", rpc.TxnRequest(compare=[compare]), rpc.TxnResponse)
        answers.append(error or str(answer.succeeded))
    print("value probes over [db, dc): " + " ".join(answers), flush=True)
    answers = []
    for probe in (0, 1, 2**40):
        compare = rpc.Compare(key=b"db", range_end=b"dc", target=rpc.Compare.VERSION, result=rpc.Compare.GREATER, version=probe)
        answer, error = unary(channel, KV + "Txn", rpc.TxnRequest(compare=[compare]), rpc.TxnResponse)
        answers.append(error or str(answer.succeeded))
    print("version probes over [db, dc): " + " ".join(answers), flush=True)
    answer, error = unary(channel, KV + "Range", rpc.RangeRequest(key=b"a", range_end=b"e"), rpc.RangeResponse)
    print(f"range [a, e): {error or [kv.key.decode() for kv in answer.kvs]} count {answer.count if answer else '-'}", flush=True)
    answer, error = unary(channel, KV + "Range", rpc.RangeRequest(key=b"\0", range_end=b"\0", count_only=True), rpc.RangeResponse)
    print(f"count of everything: {error or answer.count}", flush=True)
    inner = rpc.RequestOp(request_range=rpc.RangeRequest(key=b"a", range_end=b"e"))
    answer, error = unary(channel, KV + "Txn", rpc.TxnRequest(success=[inner]), rpc.TxnResponse)
    print(f"txn range [a, e): {error or [kv.key.decode() for kv in answer.responses[0].response_range.kvs]}", flush=True)
    answer, error = unary(channel, KV + "DeleteRange", rpc.DeleteRangeRequest(key=b"a", range_end=b"e", prev_kv=True), rpc.DeleteRangeResponse)
    print(f"delete [a, e): {error or answer.deleted} {[kv.key.decode() for kv in answer.prev_kvs] if answer else ''}", flush=True)
    inner = rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=b"\0", range_end=b"\0"))
    answer, error = unary(channel, KV + "Txn", rpc.TxnRequest(success=[inner]), rpc.TxnResponse)
    print(f"txn delete of everything: {error or answer.responses[0].response_delete_range.deleted}", flush=True)


def budget(channel):
    value = b"v" * (256 << 10)
    for index in range(32):
        _, error = unary(channel, KV + "Put", rpc.PutRequest(key=b"big/%02d" % index, value=value), rpc.PutResponse)
        if error:
            print(f"put: {error}", flush=True)
            return
    answer, error = unary(channel, KV + "Range", rpc.RangeRequest(key=b"big/", range_end=b"big0"), rpc.RangeResponse)
    if answer:
        size = len(answer.SerializeToString())
        print(f"range: kvs {len(answer.kvs)} more {answer.more} count {answer.count} bytes {size} first {answer.kvs[0].key.decode()}", flush=True)
        # A client pages on from the last key it got, as after a limit.
        last = answer.kvs[-1].key + b"\0"
        rest, error = unary(channel, KV + "Range", rpc.RangeRequest(key=last, range_end=b"big0"), rpc.RangeResponse)
        print(f"range from {last[:-1].decode()}: {error or len(rest.kvs)} more {rest.more if rest else '-'} count {rest.count if rest else '-'}", flush=True)
    else:
        print(f"range: {error}", flush=True)
    answer, error = unary(channel, KV + "Range", rpc.RangeRequest(key=b"big/", range_end=b"big0", keys_only=True), rpc.RangeResponse)
    print(f"keys-only range: {error or len(answer.kvs)} more {answer.more if answer else '-'}", flush=True)
    answer, error = unary(channel, KV + "Range", rpc.RangeRequest(key=b"big/", range_end=b"big0", count_only=True), rpc.RangeResponse)
    print(f"count-only range: {error or answer.count}", flush=True)
    answer, error = unary(channel, KV + "Range", rpc.RangeRequest(key=b"big/", range_end=b"big0", limit=4), rpc.RangeResponse)
    print(f"range limit 4: {error or len(answer.kvs)} more {answer.more if answer else '-'} count {answer.count if answer else '-'}", flush=True)
    sorted_range = rpc.RangeRequest(key=b"big/", range_end=b"big0", sort_order=rpc.RangeRequest.DESCEND, sort_target=rpc.RangeRequest.MOD)
    answer, error = unary(channel, KV + "Range", sorted_range, rpc.RangeResponse)
    print(f"range sorted by mod revision: {error or len(answer.kvs)}", flush=True)
    answer, error = unary(channel, KV + "Range", rpc.RangeRequest(key=b"big/", range_end=b"big0", revision=4), rpc.RangeResponse)
    print(f"range at revision 4: {error or len(answer.kvs)}", flush=True)
    whole = rpc.RequestOp(request_range=rpc.RangeRequest(key=b"\0", range_end=b"\0"))
    request = rpc.TxnRequest(success=[whole] * 128)
    print(f"txn request bytes: {len(request.SerializeToString())}", flush=True)
    answer, error = unary(channel, KV + "Txn", request, rpc.TxnResponse)
    print(f"txn of 128 whole ranges: {error or 'OK %d' % len(answer.SerializeToString())}", flush=True)
    small = rpc.RequestOp(request_range=rpc.RangeRequest(key=b"big/00"))
    answer, error = unary(channel, KV + "Txn", rpc.TxnRequest(success=[small] * 8), rpc.TxnResponse)
    print(f"txn of 8 one-key ranges: {error or 'OK %d' % len(answer.responses)}", flush=True)


def txn_decode(channel):
    request = b"\x0a\x00" * ((4 << 20) // 2 - 8)
    _, error = unary(channel, KV + "Txn", request, rpc.TxnResponse)
    print(f"txn of {len(request) // 2} empty compares: {error}", flush=True)
    nested = rpc.RequestOp(request_txn=rpc.TxnRequest(compare=[rpc.Compare()] * 200)).SerializeToString()
    _, error = unary(channel, KV + "Txn", b"\x12" + bytes([len(nested) & 0x7F | 0x80, len(nested) >> 7]) + nested, rpc.TxnResponse)
    print(f"nested txn: {error}", flush=True)


def watch_creates(channel, count):
    """Opens a Watch stream, sends `count` creates, returns (created, refusal reasons)."""
    requests = queue.Queue()
    for index in range(count):
        requests.put(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(key=b"w%d" % index)).SerializeToString())

    def feed():
        while True:
            item = requests.get()
            if item is None:
                return
            yield item

    responses = channel.stream_stream("/etcdserverpb.Watch/Watch")(feed(), timeout=60)
    created, reasons = 0, {}
    for raw in responses:
        response = rpc.WatchResponse.FromString(raw)
        if response.created and response.canceled:
            reasons[response.cancel_reason] = reasons.get(response.cancel_reason, 0) + 1
        elif response.created:
            created += 1
        if created + sum(reasons.values()) == count:
            break
    return responses, requests, created, reasons


def watchers(port):
    first = grpc.insecure_channel(f"127.0.0.1:{port}")
    stream, feed, created, reasons = watch_creates(first, 1000)
    print(f"one stream asked for 1000: created {created}", flush=True)
    for reason, count in sorted(reasons.items()):
        print(f"refused {count}: {reason}", flush=True)
    # Its own subchannel pool: grpcio would otherwise share the first one's connection.
    second = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])
    other, other_feed, created, reasons = watch_creates(second, 1)
    print(f"another connection asked for 1: created {created}", flush=True)
    for queue_ in (feed, other_feed):
        queue_.put(None)
    stream.cancel()
    other.cancel()


def leases(channel, count):
    granted = 0
    last_error = None
    for _ in range(count + 1):
        answer, error = unary(channel, "/etcdserverpb.Lease/LeaseGrant", rpc.LeaseGrantRequest(TTL=600), rpc.LeaseGrantResponse)
        if error:
            last_error = error
            break
        granted += 1
    print(f"granted {granted}; then: {last_error}", flush=True)


def token_watch(channel):
    requests = queue.Queue()
    requests.put(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(key=b"t", range_end=b"u")).SerializeToString())

    def feed():
        while True:
            item = requests.get()
            if item is None:
                return
            yield item

    responses = channel.stream_stream("/etcdserverpb.Watch/Watch")(feed(), timeout=120)
    events = 0
    try:
        for raw in responses:
            response = rpc.WatchResponse.FromString(raw)
            if response.created:
                print("watching", flush=True)
            events += len(response.events)
            for event in response.events:
                print(f"event {event.kv.key.decode()}", flush=True)
        print(f"stream ended: OK after {events} events", flush=True)
    except grpc.RpcError as error:
        print(f"stream ended: {error.code().name} {error.details()} after {events} events", flush=True)
    requests.put(None)


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", 64 << 20)])
    if mode == "foreign":
        foreign(channel)
    elif mode == "budget":
        budget(channel)
    elif mode == "txn-decode":
        txn_decode(channel)
    elif mode == "watchers":
        watchers(port)
    elif mode == "leases":
        leases(channel, int(sys.argv[3]))
    elif mode == "token-watch":
        token_watch(channel)
    else:
        raise SystemExit(f"unknown mode {mode}")


main()
