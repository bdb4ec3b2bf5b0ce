"""The etcd API's HTTP/2 framing under random frames: connections that send the preface
and then a run of frames drawn at random (every frame type and flag, streams 0, even,
odd and past 2^31, lengths that lie, padding past the payload, settings and window
increments at 0, 2^31-1 and 2^32-1, gRPC messages whose length prefix lies or names
4 MiB and more, header blocks that are well-formed requests or noise), some a byte at a
time, some closed with a reset. The seed fixes the run, so a failure repeats. Every 50
connections, and at the end, an ordinary Put and Range must be answered; the script
prints one line and exits non-zero when one is not.

usage: h2_fuzz.py PORT [--seed S] [--connections N]
"""

import random
import socket
import struct
import sys

import grpc
import aetcd.rpc as rpc

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
PATHS = [b"/etcdserverpb.KV/Put", b"/etcdserverpb.KV/Range", b"/etcdserverpb.KV/Txn", b"/etcdserverpb.Watch/Watch",
         b"/etcdserverpb.Lease/LeaseKeepAlive", b"/etcdserverpb.Maintenance/Status", b"/nowhere", b""]


class Frames:
    """Random frames from one seeded generator."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def pick(self, *choices):
        return self.rng.choice(choices)

    def noise(self, count):
        return bytes(self.rng.getrandbits(8) for _ in range(count))

    @staticmethod
    def frame(kind, flags, stream, payload, length=None):
        size = len(payload) if length is None else length
        return struct.pack(">I", size)[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

    def header_block(self):
        if self.rng.random() < 0.3:
            return self.noise(self.pick(0, 1, 3, 10, 100))
        fields = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", self.pick(*PATHS)), (b":authority", b"x"),
                  (b"content-type", b"application/grpc"), (b"te", b"trailers")]
        if self.rng.random() < 0.2:
            self.rng.shuffle(fields)
        # HPACK literals without indexing, new names, no Huffman coding.
        return b"".join(b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value for name, value in fields)

    def grpc_message(self):
        if self.rng.random() < 0.3:
            return self.noise(self.pick(0, 1, 4, 9))
        body = self.noise(self.pick(0, 1, 5, 30, 300))
        length = self.pick(len(body), len(body), 0, 0xFFFFFFFF, 0x7FFFFFFF, 4 * 1024 * 1024 + 1, len(body) + 10)
        return bytes([self.pick(0, 0, 0, 1, 2, 255)]) + struct.pack(">I", length) + body

    def settings(self):
        if self.rng.random() < 0.2:
            return self.noise(5)
        return b"".join(struct.pack(">HI", self.pick(1, 2, 3, 4, 5, 6, 7, 0xFFFF),
                                    self.pick(0, 1, 16383, 16384, 16777215, 16777216, 0x7FFFFFFF, 0xFFFFFFFF))
                        for _ in range(self.pick(0, 1, 2)))

    def payload(self, kind):
        if kind == 0x0:
            return self.grpc_message()
        if kind == 0x1:
            return self.header_block()
        if kind == 0x9:
            return self.noise(self.pick(0, 1, 5, 20))
        if kind == 0x4:
            return self.settings()
        if kind == 0x8:
            return struct.pack(">I", self.pick(0, 1, 65535, 0x7FFFFFFF, 0xFFFFFFFF)) if self.rng.random() < 0.8 else self.noise(self.pick(0, 3, 5))
        sizes = {0x2: (5, 5, 0, 4), 0x3: (4, 4, 0, 5), 0x6: (8, 8, 0, 7, 9), 0x7: (8, 12, 0, 3)}
        return self.noise(self.pick(*sizes.get(kind, (0, 4, 40))))

    def next(self):
        kind = self.pick(0x0, 0x0, 0x0, 0x1, 0x1, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0x9, 0xA, 0xC8)
        flags = self.rng.getrandbits(8) if self.rng.random() < 0.4 else self.pick(0x0, 0x1, 0x4, 0x5, 0x8, 0x20, 0x25)
        stream = self.pick(1, 1, 3, 3, 5, 7, 0, 2, 4, 0x7FFFFFFF, 0xFFFFFFFF, self.rng.getrandbits(31))
        payload = self.payload(kind)
        if flags & 0x8 and payload:
            payload = bytes([self.pick(0, 1, min(len(payload), 255), 255)]) + payload
        length = self.pick(0, 0xFFFFFF, len(payload) + 1, 16385) if self.rng.random() < 0.03 else None
        return self.frame(kind, flags, stream, payload, length)


def one_connection(port, frames):
    """Sends one connection's random frames and reads until the server closes or is quiet;
    returns whether the server ended it with GOAWAY."""
    rng = frames.rng
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        data = PREFACE + Frames.frame(0x4, 0, 0, b"") if rng.random() < 0.95 else frames.noise(30)
        for _ in range(frames.pick(1, 3, 10, 30)):
            data += frames.next()
        try:
            step = frames.pick(len(data), len(data), 1, 7, 100)
            for start in range(0, len(data), step):
                sock.sendall(data[start:start + step])
        except OSError:
            pass  # the server closed the connection part way: what it may do
        received = b""
        sock.settimeout(0.05)
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except OSError:
            pass
        if rng.random() < 0.3:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return any(received[at + 3] == 0x7 for at in frame_starts(received))


def frame_starts(received):
    """Where each whole frame the server sent starts, after its SETTINGS."""
    starts, at = [], 0
    while at + 9 <= len(received):
        starts.append(at)
        at += 9 + int.from_bytes(received[at:at + 3], "big")
    return starts


def still_answers(port, number):
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        put = channel.unary_unary("/etcdserverpb.KV/Put", request_serializer=rpc.PutRequest.SerializeToString,
                                  response_deserializer=rpc.PutResponse.FromString)
        get = channel.unary_unary("/etcdserverpb.KV/Range", request_serializer=rpc.RangeRequest.SerializeToString,
                                  response_deserializer=rpc.RangeResponse.FromString)
        value = b"after %d" % number
        put(rpc.PutRequest(key=b"fuzz", value=value), timeout=10)
        found = get(rpc.RangeRequest(key=b"fuzz"), timeout=10)
        return [kv.value for kv in found.kvs] == [value]


def main(argv):
    port = int(argv[1])
    options = dict(zip(argv[2::2], argv[3::2]))
    seed = int(options.get("--seed", "1"))
    connections = int(options.get("--connections", "300"))
    frames = Frames(seed)
    goaways = 0
    for number in range(1, connections + 1):
        goaways += one_connection(port, frames)
        if number % 50 == 0 or number == connections:
            if not still_answers(port, number):
                print(f"random frames: after {number} connections (seed {seed}) a Put was not read back")
                return 1
    print(f"random frames: {connections} connections (seed {seed}), {goaways} ended with GOAWAY; the server still answers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
