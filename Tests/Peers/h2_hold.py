"""Clients that make the etcd API hold memory or descriptors for them, with bounded load,
measuring the server's resident memory (VmRSS sampled, VmHWM at the end) and CPU from
/proc/PID while they do. Prints what happened as one JSON object on its last line.

  h2_hold.py PORT --pid PID zero-window [--connections 2] [--streams 150] [--kind range]
      [--messages N] [--values 32] [--hold 10]
    Connections that grant no flow-control window (SETTINGS_INITIAL_WINDOW_SIZE 0),
    each opening --streams requests and never taking an answer's DATA:
      range      a Range over the whole keyspace each (after --values puts of 256 KiB);
      keepalive  a LeaseKeepAlive stream each, sending --messages keep-alives of 7 bytes;
      progress   a Watch stream each, sending --messages progress requests.
    Meanwhile an ordinary client (grpcio) puts and reads a key: "legit" is its outcome.

  h2_hold.py PORT --pid PID unfinished [--connections 17] [--streams 4]
      [--declared 4194304] [--sent 4194303] [--hold 10]
    Puts whose gRPC prefix declares --declared bytes, of which --sent are sent (as the
    server's windows allow) and the rest never; then an ordinary Put ("legit"), then
    --hold seconds in which the server may end the unfinished ones ("ended").

  h2_hold.py PORT --pid PID idle [--connections 300] [--rest-port P] [--ping] [--hold 10]
    Connections that send the HTTP/2 preface and nothing more (--ping: a PING every
    half second each); reports how many the server took (sent its SETTINGS), closed at
    once, sent GOAWAY and closed within --hold, whether REST /healthz on --rest-port
    answered meanwhile, and the server's CPU over the hold.
"""

import argparse
import json
import selectors
import socket
import struct
import threading
import time

import grpc
import hpack
import aetcd.rpc as rpc

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7, 0x8


def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def request_headers(stream, path, end_stream=False):
    fields = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", path), (b":authority", b"localhost"),
              (b"content-type", b"application/grpc"), (b"te", b"trailers")]
    return frame(HEADERS, 0x4 | (0x1 if end_stream else 0), stream, b"".join(literal(n, v) for n, v in fields))


def grpc_message(message):
    return b"\x00" + struct.pack(">I", len(message)) + message


class Memory:
    """The server's VmRSS, sampled every 100 ms on a thread; its CPU from /proc/PID/stat."""

    def __init__(self, pid):
        self.pid = pid
        self.peak = 0
        self.running = True
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def field(self, name):
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith(name + ":"):
                    return int(line.split()[1]) * 1024
        return 0

    def rss(self):
        return self.field("VmRSS")

    def sample(self):
        while self.running:
            try:
                self.peak = max(self.peak, self.rss())
            except OSError:
                return
            time.sleep(0.1)

    def cpu_seconds(self):
        with open(f"/proc/{self.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / 100.0

    def stop(self):
        self.running = False
        self.thread.join()
        return self.field("VmHWM")


class Connection:
    """A raw HTTP/2 client connection: what it sends is built here, what the server sends
    is read (decoded with hpack) by `pump`, with the server's windows for flow control."""

    def __init__(self, port, settings=b""):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, settings))
        self.buffer = b""
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 1 << 16
        self.status = {}        # stream -> grpc-status of the header block that ended it
        self.messages = {}      # stream -> grpc-message
        self.resets = {}        # stream -> RST_STREAM code
        self.goaway = None      # GOAWAY code
        self.settings = False   # the server's SETTINGS came
        self.closed = False
        self.window = 65535     # what the server lets this end send, on the connection
        self.stream_windows = {}
        self.server_initial = 65535

    def fileno(self):
        return self.sock.fileno()

    def pump(self):
        """Reads what the server sent (without waiting); False once the connection ended."""
        try:
            self.sock.setblocking(False)
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        finally:
            try:
                self.sock.setblocking(True)
            except OSError:
                pass
        if not chunk:
            self.closed = True
            return False
        self.buffer += chunk
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                break
            kind, flags = self.buffer[3], self.buffer[4]
            stream = int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
            payload = self.buffer[9:9 + length]
            self.buffer = self.buffer[9 + length:]
            self.frame(kind, flags, stream, payload)
        return True

    def frame(self, kind, flags, stream, payload):
        if kind == SETTINGS and not flags & 0x1:
            self.settings = True
            for index in range(0, len(payload), 6):
                key, value = struct.unpack(">HI", payload[index:index + 6])
                if key == 4:
                    for each in self.stream_windows:
                        self.stream_windows[each] += value - self.server_initial
                    self.server_initial = value
            self.send(frame(SETTINGS, 0x1, 0, b""))
        elif kind == HEADERS:
            fields = dict(self.decoder.decode(payload))
            if flags & 0x1:
                self.status[stream] = fields.get(b"grpc-status", fields.get("grpc-status"))
                self.messages[stream] = fields.get(b"grpc-message", fields.get("grpc-message"))
        elif kind == RST_STREAM:
            self.resets[stream] = int.from_bytes(payload, "big")
        elif kind == GOAWAY:
            self.goaway = int.from_bytes(payload[4:8], "big")
        elif kind == WINDOW_UPDATE:
            increment = int.from_bytes(payload, "big") & 0x7FFFFFFF
            if stream == 0:
                self.window += increment
            elif stream in self.stream_windows:
                self.stream_windows[stream] += increment

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError:
            self.closed = True

    def open(self, stream, path, end_stream=False):
        self.stream_windows[stream] = self.server_initial
        self.send(request_headers(stream, path, end_stream))

    def room(self, stream):
        return max(0, min(self.window, self.stream_windows.get(stream, 0), 16384))

    def data(self, stream, payload, end_stream=False):
        """Sends `payload` as DATA within the windows it has; returns what is left."""
        while payload:
            room = self.room(stream)
            if room == 0:
                return payload
            part, payload = payload[:room], payload[room:]
            self.window -= len(part)
            self.stream_windows[stream] -= len(part)
            self.send(frame(DATA, 0x1 if end_stream and not payload else 0, stream, part))
        return payload

    def ended(self, stream):
        return stream in self.status or stream in self.resets

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def pump_all(connections, seconds):
    selector = selectors.DefaultSelector()
    for connection in connections:
        if not connection.closed:
            selector.register(connection, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and selector.get_map():
        for key, _ in selector.select(max(0.0, min(0.2, deadline - time.monotonic()))):
            if not key.fileobj.pump():
                selector.unregister(key.fileobj)
    selector.close()


def legit(port):
    """An ordinary client's put and read of one key: "OK" or the gRPC code's name."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        channel.unary_unary("/etcdserverpb.KV/Put")(rpc.PutRequest(key=b"legit", value=b"v").SerializeToString(), timeout=20)
        got = rpc.RangeResponse.FromString(channel.unary_unary("/etcdserverpb.KV/Range")(rpc.RangeRequest(key=b"legit").SerializeToString(), timeout=20))
        return "OK" if [kv.value for kv in got.kvs] == [b"v"] else "wrong answer"
    except grpc.RpcError as error:
        return f"{error.code().name}: {error.details()}"
    finally:
        channel.close()


def code_counts(connections):
    counts = {}
    for connection in connections:
        for status in connection.status.values():
            name = "status " + (status.decode() if isinstance(status, bytes) else str(status))
            counts[name] = counts.get(name, 0) + 1
        for code in connection.resets.values():
            counts[f"reset {code}"] = counts.get(f"reset {code}", 0) + 1
    return counts


def zero_window(args, memory):
    channel = grpc.insecure_channel(f"127.0.0.1:{args.port}")
    lease = 0
    if args.kind == "range":
        value = b"v" * (256 << 10)
        for index in range(args.values):
            channel.unary_unary("/etcdserverpb.KV/Put")(rpc.PutRequest(key=b"big/%02d" % index, value=value).SerializeToString(), timeout=60)
    elif args.kind == "keepalive":
        lease = rpc.LeaseGrantResponse.FromString(channel.unary_unary("/etcdserverpb.Lease/LeaseGrant")(
            rpc.LeaseGrantRequest(TTL=3600).SerializeToString(), timeout=20)).ID
    channel.close()
    time.sleep(1)
    before = memory.rss()
    start = time.monotonic()
    connections = [Connection(args.port, struct.pack(">HI", 4, 0)) for _ in range(args.connections)]
    sent = 0
    if args.kind == "range":
        request = grpc_message(rpc.RangeRequest(key=b"\0", range_end=b"\0").SerializeToString())
        for connection in connections:
            for index in range(args.streams):
                stream = 1 + 2 * index
                connection.open(stream, b"/etcdserverpb.KV/Range")
                connection.data(stream, request, end_stream=True)
                sent += len(request) + 60
    else:
        if args.kind == "keepalive":
            path, message = b"/etcdserverpb.Lease/LeaseKeepAlive", rpc.LeaseKeepAliveRequest(ID=lease).SerializeToString()
        else:
            path = b"/etcdserverpb.Watch/Watch"
            message = rpc.WatchRequest(progress_request=rpc.WatchProgressRequest()).SerializeToString()
        framed = grpc_message(message)
        left = {}
        for connection in connections:
            for index in range(args.streams):
                stream = 1 + 2 * index
                connection.open(stream, path)
                left[(connection, stream)] = framed * args.messages
        pump_all(connections, 0.5)
        deadline = time.monotonic() + args.send_time
        while left and time.monotonic() < deadline:
            for (connection, stream), payload in list(left.items()):
                if connection.closed or connection.ended(stream):
                    del left[(connection, stream)]
                    continue
                rest = connection.data(stream, payload[:1 << 18])
                sent += min(len(payload), 1 << 18) - len(rest)
                payload = rest + payload[1 << 18:]
                if payload:
                    left[(connection, stream)] = payload
                else:
                    del left[(connection, stream)]
            pump_all(connections, 0.01)
    pump_all(connections, 2)
    answered = legit(args.port)
    pump_all(connections, args.hold)
    result = {
        "rss_before": before, "rss_peak": memory.peak, "rss_end": memory.rss(), "sent_bytes": sent,
        "seconds": round(time.monotonic() - start, 1), "ended": code_counts(connections), "legit": answered,
    }
    for connection in connections:
        connection.close()
    return result


def unfinished(args, memory):
    before = memory.rss()
    connections = [Connection(args.port) for _ in range(args.connections)]
    pump_all(connections, 0.5)
    left = {}
    for connection in connections:
        for index in range(args.streams):
            stream = 1 + 2 * index
            connection.open(stream, b"/etcdserverpb.KV/Put")
            left[(connection, stream)] = b"\x00" + struct.pack(">I", args.declared) + b"\x01" * (args.sent - 5)
    deadline = time.monotonic() + 60
    while left and time.monotonic() < deadline:
        for key, payload in list(left.items()):
            connection, stream = key
            if connection.closed or connection.ended(stream):
                del left[key]
                continue
            rest = connection.data(stream, payload)
            if rest:
                left[key] = rest
            else:
                del left[key]
        pump_all(connections, 0.01)
    pump_all(connections, 0.5)
    # Then the last room the server has: one more connection, whose unfinished messages
    # carry less and less (256 KiB down to 8 bytes), each size until the server refuses
    # one; a refused stream gives back only what it carried.
    extra = Connection(args.port)
    pump_all([extra], 0.3)
    stream = 1
    for size in (256 << 10, 16 << 10, 1 << 10, 64, 8):
        for _ in range(20):
            extra.open(stream, b"/etcdserverpb.KV/Put")
            extra.data(stream, b"\x00" + struct.pack(">I", args.declared) + b"\x01" * size)
            pump_all([extra], 0.02)
            stream += 2
            if extra.closed or extra.ended(stream - 2):
                break
    connections.append(extra)
    refused_at_once = code_counts(connections)
    answered = legit(args.port)
    pump_all(connections, args.hold)
    result = {
        "rss_before": before, "rss_peak": memory.peak, "legit": answered, "refused_while_sending": refused_at_once,
        "ended": code_counts(connections[:-1]), "streams": args.connections * args.streams,
        "messages": sorted({(m.decode() if isinstance(m, bytes) else str(m)) for c in connections for m in c.messages.values()}),
    }
    for connection in connections:
        connection.close()
    return result


def healthz(port):
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        answer = sock.recv(4096)
        sock.close()
        return answer.split(b"\r\n", 1)[0].decode()
    except OSError as error:
        return f"no answer: {error}"


def idle(args, memory):
    connections = []
    for _ in range(args.connections):
        try:
            connections.append(Connection(args.port))
        except OSError:
            break
    pump_all(connections, 2)
    taken = sum(1 for c in connections if c.settings)
    closed_at_once = sum(1 for c in connections if c.closed and not c.settings)
    cpu_before, clock = memory.cpu_seconds(), time.monotonic()
    rest = healthz(args.rest_port) if args.rest_port else None
    deadline = time.monotonic() + args.hold
    while time.monotonic() < deadline:
        if args.ping:
            for connection in connections:
                if not connection.closed:
                    connection.send(frame(PING, 0, 0, b"12345678"))
        pump_all(connections, 0.5)
        if all(c.closed for c in connections):
            break
    cpu = (memory.cpu_seconds() - cpu_before) / max(0.1, time.monotonic() - clock)
    result = {
        "taken": taken, "closed_at_once": closed_at_once, "opened": len(connections), "healthz": rest,
        "goaway": sum(1 for c in connections if c.goaway == 0 and c.settings),
        "closed": sum(1 for c in connections if c.closed and c.settings), "cpu": round(cpu, 2),
    }
    for connection in connections:
        connection.close()
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("mode", choices=["zero-window", "unfinished", "idle"])
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--streams", type=int, default=150)
    parser.add_argument("--kind", choices=["range", "keepalive", "progress"], default="range")
    parser.add_argument("--messages", type=int, default=1)
    parser.add_argument("--values", type=int, default=32)
    parser.add_argument("--declared", type=int, default=4 << 20)
    parser.add_argument("--sent", type=int, default=(4 << 20) - 1)
    parser.add_argument("--rest-port", type=int)
    parser.add_argument("--ping", action="store_true")
    parser.add_argument("--send-time", type=float, default=60)
    parser.add_argument("--hold", type=float, default=10)
    args = parser.parse_args()
    memory = Memory(args.pid)
    result = {"zero-window": zero_window, "unfinished": unfinished, "idle": idle}[args.mode](args, memory)
    result["rss_hwm"] = memory.stop()
    print(json.dumps(result), flush=True)


main()
