"""One etcd KV call as a gRPC client makes it, without the retries etcdctl adds (its
client retries UNAVAILABLE reads until its own timeout, which would hide what one call
answers). Prints one JSON line: the gRPC status name, its message, the seconds the call
took, and for a success the header's revision and the values found.

usage: etcd_call.py PORT put KEY VALUE
       etcd_call.py PORT put KEY bytes:N     (a value of N bytes, past what an argument holds)
       etcd_call.py PORT range KEY
       etcd_call.py PORT alarm ACTION        (Maintenance/Alarm: get, activate or deactivate
                                             NOSPACE naming no member, so member 0's, as
                                             etcd keeps it; prints the alarms)
"""

import json
import sys
import time

import grpc
import aetcd.rpc as rpc


def main(port, operation, key, value=None):
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    grpc.channel_ready_future(channel).result(timeout=20)
    if operation == "put":
        data = b"x" * int(value[6:]) if value.startswith("bytes:") else value.encode()
        method, request, response = "Put", rpc.PutRequest(key=key.encode(), value=data), rpc.PutResponse
    elif operation == "alarm":
        action = {"get": rpc.AlarmRequest.GET, "activate": rpc.AlarmRequest.ACTIVATE,
                  "deactivate": rpc.AlarmRequest.DEACTIVATE}[key]
        method, request, response = "Alarm", rpc.AlarmRequest(action=action, alarm=rpc.NOSPACE), rpc.AlarmResponse
    else:
        method, request, response = "Range", rpc.RangeRequest(key=key.encode()), rpc.RangeResponse
    service = "Maintenance" if operation == "alarm" else "KV"
    stub = channel.unary_unary(f"/etcdserverpb.{service}/{method}", request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=response.FromString)
    start = time.monotonic()
    result = {}
    try:
        answer = stub(request, timeout=60)
        result = {"code": "OK", "message": "", "revision": answer.header.revision}
        if operation == "range":
            result["values"] = [kv.value.decode() for kv in answer.kvs]
        if operation == "alarm":
            result = {"code": "OK", "message": "", "alarms": [rpc.AlarmType.Name(a.alarm) for a in answer.alarms]}
    except grpc.RpcError as error:
        result = {"code": error.code().name, "message": error.details() or ""}
    result["seconds"] = time.monotonic() - start
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), *sys.argv[2:])
