"""The etcd API's HTTP/2 and gRPC framing under abuse: connections that speak HTTP/1,
send garbage after the preface, send a request that is not gRPC, open a watch and
vanish, or say nothing at all. Each must end (or be answered) without disturbing the
server: after all of them an ordinary request is answered. Prints one line per case;
exits non-zero on the first that fails.

usage: h2_abuse.py PORT
"""

import socket
import struct
import sys
import time

import grpc
import aetcd.rpc as rpc

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):
    # HPACK: a literal header field without indexing, new name, no Huffman coding.
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def headers(stream, fields, end_stream):
    block = b"".join(literal(name, value) for name, value in fields)
    return frame(0x1, 0x4 | (0x1 if end_stream else 0), stream, block)


def request_fields(path, content_type=b"application/grpc"):
    return [(b":method", b"POST"), (b":scheme", b"http"), (b":path", path), (b":authority", b"localhost"),
            (b"content-type", content_type), (b"te", b"trailers")]


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return sock


def read_until_closed(sock, seconds=10):
    """Everything the server sends until it closes the connection; None if it does not."""
    sock.settimeout(seconds)
    data = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return None
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk
    return None


def frames(data):
    out = []
    while len(data) >= 9:
        length = int.from_bytes(data[:3], "big")
        out.append((data[3], data[4], int.from_bytes(data[5:9], "big") & 0x7FFFFFFF, data[9:9 + length]))
        data = data[9 + length:]
    return out


def check(what, condition, detail=""):
    if not condition:
        print(f"FAIL {what} {detail}")
        sys.exit(1)
    print(f"ok {what}", flush=True)


def main(port):
    # A client that says nothing holds a connection open while the rest go on.
    silent = connect(port)

    sock = connect(port)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    check("an HTTP/1 request is refused and the connection closed", read_until_closed(sock) is not None)

    sock = connect(port)
    sock.sendall(PREFACE + frame(0x4, 0, 0, b"") + b"\xff" * 64)
    check("garbage after the preface closes the connection", read_until_closed(sock) is not None)

    sock = connect(port)
    sock.sendall(PREFACE + frame(0x4, 0, 0, b"") + headers(1, request_fields(b"/etcdserverpb.KV/Range", b"text/plain"), True))
    sock.settimeout(10)
    seen = b""
    deadline = time.monotonic() + 10
    answered = []
    while time.monotonic() < deadline and not answered:
        seen += sock.recv(65536)
        answered = [f for f in frames(seen) if f[0] == 0x1 and f[2] == 1]
    check("a request that is not gRPC gets an HTTP answer that ends its stream", answered and answered[0][1] & 0x1, repr(frames(seen)))
    sock.close()

    sock = connect(port)
    create = rpc.WatchRequest(create_request=rpc.WatchCreateRequest(key=b"a", range_end=b"\0")).SerializeToString()
    message = b"\x00" + struct.pack(">I", len(create)) + create
    sock.sendall(PREFACE + frame(0x4, 0, 0, b"") + headers(1, request_fields(b"/etcdserverpb.Watch/Watch"), False) + frame(0x0, 0, 1, message))
    time.sleep(0.5)
    sock.close()
    check("a watch whose client vanished leaves the server serving", True)

    sock = connect(port)
    sock.sendall(PREFACE + frame(0x4, 0, 0, b"") + headers(1, request_fields(b"/etcdserverpb.KV/Put"), False)
                 + frame(0x0, 0, 1, b"\x00" + struct.pack(">I", 100)))
    sock.close()
    check("a client that vanished inside a request message leaves the server serving", True)

    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    put = channel.unary_unary("/etcdserverpb.KV/Put")
    put(rpc.PutRequest(key=b"after", value=b"abuse").SerializeToString(), timeout=20)
    got = rpc.RangeResponse.FromString(channel.unary_unary("/etcdserverpb.KV/Range")(rpc.RangeRequest(key=b"after").SerializeToString(), timeout=20))
    check("afterwards an ordinary request is answered", [kv.value for kv in got.kvs] == [b"abuse"], repr(got))
    check("a connection that never sent the preface is closed (serve --idle-timeout)", read_until_closed(silent, 30) is not None)


main(int(sys.argv[1]))
