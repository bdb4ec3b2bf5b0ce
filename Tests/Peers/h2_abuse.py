"""The etcd API's HTTP/2 and gRPC framing under abuse: connections that speak HTTP/1,
send garbage after the preface, send a request that is not gRPC, send malformed header
blocks beside a well-formed request, open a watch and vanish, send parts of more big messages than the server holds, or say nothing at all. Each must end (or be answered) without disturbing the
server: after all of them an ordinary request is answered. Then the rules of HTTP/2
itself (RFC 9113), which the server enforces on its own: a breach that concerns one
stream resets that stream and the connection goes on; one that concerns the connection
ends it with GOAWAY and the right code; flow control, frame sizes, padding, priority,
CONTINUATION, the client's HPACK table size and its settings are honoured both ways.
Prints one line per case; exits non-zero on the first that fails.

With --connection-limit N (a server started with --max-connections N): N connections
are served, one more is closed at once, and once one of the N goes a new one is served.

usage: h2_abuse.py PORT [--connection-limit N]
"""

import collections
import queue
import socket
import struct
import sys
import time

import grpc
import h2.config
import h2.connection
import h2.events
import h2.settings
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


def connect_h2(port):
    """A connection whose HTTP/2 state (frames, windows) h2 keeps, its preface sent."""
    sock = connect(port)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


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


def unfinished_messages(port, streams, declared, sent):
    """Opens `streams` Put requests on one connection, each declaring a message of
    `declared` bytes and sending the first `sent` of them, as HTTP/2 flow control allows
    (h2 keeps the windows). Returns the grpc-status and grpc-message of every stream the
    server ended meanwhile, by stream ID."""
    sock, conn = connect_h2(port)
    ended = {}

    def pump(seconds):
        """Takes in what the server sent within `seconds`; False when it sent nothing."""
        sock.settimeout(seconds)
        try:
            data = sock.recv(1 << 20)
        except socket.timeout:
            return False
        if not data:
            raise ConnectionError("the server closed the connection")
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.TrailersReceived) or (isinstance(event, h2.events.ResponseReceived) and event.stream_ended):
                fields = dict(event.headers)
                ended[event.stream_id] = (fields.get("grpc-status"), fields.get("grpc-message"))
        sock.sendall(conn.data_to_send())
        return True

    pump(1)
    ids = []
    for _ in range(streams):
        stream = conn.get_next_available_stream_id()
        ids.append(stream)
        conn.send_headers(stream, [(name.decode(), value.decode()) for name, value in request_fields(b"/etcdserverpb.KV/Put")])
        remaining = b"\x00" + struct.pack(">I", declared) + b"\x01" * (sent - 5)
        deadline = time.monotonic() + 30
        while remaining and stream not in ended and time.monotonic() < deadline:
            room = min(conn.local_flow_control_window(stream), conn.max_outbound_frame_size, len(remaining))
            if room > 0:
                conn.send_data(stream, remaining[:room])
                remaining = remaining[room:]
                sock.sendall(conn.data_to_send())
            else:
                pump(0.5)
    # Until every stream has ended, or 10 s (the server ends a message not whole within
    # its idle timeout).
    deadline = time.monotonic() + 10
    while len(ended) < len(ids) and time.monotonic() < deadline:
        pump(1)
    sock.close()
    return ids, ended


def small_messages(port, count, lease=None):
    """Sends `count` small messages on one connection, each answered before the next:
    Puts, a stream each, or with `lease`, keep-alives on one stream. Returns the
    increments of the WINDOW_UPDATEs the server sent by stream ID (0: the connection's),
    the request data bytes sent, and the client's windows left: the connection's and,
    for keep-alives, their stream's."""
    sock, conn = connect_h2(port)
    increments = collections.defaultdict(list)
    answers = collections.Counter()
    sent = 0

    def pump():
        sock.settimeout(10)
        data = sock.recv(1 << 20)
        if not data:
            raise ConnectionError("the server closed the connection")
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.WindowUpdated):
                increments[event.stream_id].append(event.delta)
            if isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                answers[event.stream_id] += 1
        sock.sendall(conn.data_to_send())

    stream = None
    for index in range(count):
        if lease is None or stream is None:
            stream = conn.get_next_available_stream_id()
            path = b"/etcdserverpb.KV/Put" if lease is None else b"/etcdserverpb.Lease/LeaseKeepAlive"
            conn.send_headers(stream, [(name.decode(), value.decode()) for name, value in request_fields(path)])
        if lease is None:
            message = rpc.PutRequest(key=b"window/%d" % index, value=b"v" * 32).SerializeToString()
        else:
            message = rpc.LeaseKeepAliveRequest(ID=lease).SerializeToString()
        conn.send_data(stream, b"\x00" + struct.pack(">I", len(message)) + message, end_stream=lease is None)
        sent += 5 + len(message)
        sock.sendall(conn.data_to_send())
        while answers[stream] < (1 if lease is None else index + 1):
            pump()
    windows = (conn.outbound_flow_control_window, conn.local_flow_control_window(stream) if lease is not None else None)
    sock.close()
    return increments, sent, windows


GOAWAY, RST_STREAM, SETTINGS, PING, WINDOW_UPDATE, DATA, HEADERS = 0x7, 0x3, 0x4, 0x6, 0x8, 0x0, 0x1
CODES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 3: "FLOW_CONTROL_ERROR", 5: "STREAM_CLOSED", 6: "FRAME_SIZE_ERROR",
         7: "REFUSED_STREAM", 9: "COMPRESSION_ERROR", 11: "ENHANCE_YOUR_CALM"}


def put_message(key=b"rules", value=b"v"):
    message = rpc.PutRequest(key=key, value=value).SerializeToString()
    return b"\x00" + struct.pack(">I", len(message)) + message


def goaway_code(data):
    """The error code of the GOAWAY in `data`, by name; None if there is none."""
    for kind, _, _, payload in frames(data):
        if kind == GOAWAY:
            return CODES.get(int.from_bytes(payload[4:8], "big"), "?")
    return None


def after_preface(port, data, seconds=10):
    """Sends the preface, an empty SETTINGS, then `data`; returns all the server sent
    until it closed the connection (None if it did not)."""
    sock = connect(port)
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b"") + data)
    got = read_until_closed(sock, seconds)
    sock.close()
    return got


def exchange(port, data, until, seconds=10):
    """Sends the preface, an empty SETTINGS and `data` on a connection the server keeps
    open; returns the frames it sent once `until(frames)` holds (or the time is up)."""
    sock = connect(port)
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b"") + data)
    sock.settimeout(seconds)
    seen = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not until(frames(seen)):
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        seen += chunk
    sock.close()
    return frames(seen)


def answered(stream):
    return lambda got: any(f[0] == HEADERS and f[2] == stream and f[1] & 0x1 for f in got)


def protocol_rules(port):
    fields = request_fields(b"/etcdserverpb.KV/Put")
    put = put_message()

    got = exchange(port, frame(PING, 0, 0, b"12345678"), lambda got: any(f[0] == PING for f in got))
    settings = [f for f in got if f[0] == SETTINGS and not f[1] & 0x1]
    advertised = {int.from_bytes(settings[0][3][i:i + 2], "big"): int.from_bytes(settings[0][3][i + 2:i + 6], "big")
                  for i in range(0, len(settings[0][3]), 6)} if settings else {}
    check("the server's SETTINGS: 256 streams at once, 1 MiB stream windows, 16 KiB header lists",
          advertised == {3: 256, 4: 1 << 20, 6: 16 << 10}, repr(advertised))
    check("the client's SETTINGS is acknowledged", any(f[0] == SETTINGS and f[1] & 0x1 for f in got), repr(got))
    check("a PING is answered with an acknowledgement carrying its payload",
          [(f[1], f[3]) for f in got if f[0] == PING] == [(0x1, b"12345678")], repr(got))

    connection_errors = [
        ("a PING of 7 bytes", frame(PING, 0, 0, b"1234567"), "FRAME_SIZE_ERROR"),
        ("a PING on a stream", frame(PING, 0, 1, b"12345678"), "PROTOCOL_ERROR"),
        ("a WINDOW_UPDATE of 0 on the connection", frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0)), "PROTOCOL_ERROR"),
        ("a WINDOW_UPDATE taking the connection's window past 2^31-1", frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0x7FFFFFFF)), "FLOW_CONTROL_ERROR"),
        ("SETTINGS_INITIAL_WINDOW_SIZE of 2^31", frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 1 << 31)), "FLOW_CONTROL_ERROR"),
        ("SETTINGS_MAX_FRAME_SIZE of 16383", frame(SETTINGS, 0, 0, struct.pack(">HI", 5, 16383)), "PROTOCOL_ERROR"),
        ("SETTINGS_ENABLE_PUSH of 2", frame(SETTINGS, 0, 0, struct.pack(">HI", 2, 2)), "PROTOCOL_ERROR"),
        ("SETTINGS of 5 bytes", frame(SETTINGS, 0, 0, b"\x00" * 5), "FRAME_SIZE_ERROR"),
        ("a SETTINGS acknowledgement with a payload", frame(SETTINGS, 0x1, 0, struct.pack(">HI", 4, 1)), "FRAME_SIZE_ERROR"),
        ("DATA on a stream never opened", frame(DATA, 0, 1, put), "PROTOCOL_ERROR"),
        ("DATA on stream 0", frame(DATA, 0, 0, put), "PROTOCOL_ERROR"),
        ("a stream opened with an even number", headers(2, fields, True), "PROTOCOL_ERROR"),
        ("HEADERS on a stream below one already opened", headers(5, fields, False) + headers(3, fields, True), "STREAM_CLOSED"),
        ("RST_STREAM on a stream never opened", frame(RST_STREAM, 0, 9, struct.pack(">I", 8)), "PROTOCOL_ERROR"),
        ("RST_STREAM of 3 bytes", headers(1, fields, False) + frame(RST_STREAM, 0, 1, b"\x00" * 3), "FRAME_SIZE_ERROR"),
        ("PUSH_PROMISE from a client", frame(0x5, 0x4, 1, struct.pack(">I", 2)), "PROTOCOL_ERROR"),
        ("CONTINUATION with no header block open", frame(0x9, 0x4, 1, b""), "PROTOCOL_ERROR"),
        ("a frame between HEADERS and its CONTINUATION", frame(HEADERS, 0, 1, b"") + frame(PING, 0, 0, b"12345678"), "PROTOCOL_ERROR"),
        ("a header block over 64 KiB in CONTINUATION frames",
         frame(HEADERS, 0, 1, b"") + b"".join(frame(0x9, 0, 1, b"\x00" * 16384) for _ in range(5)), "ENHANCE_YOUR_CALM"),
        ("65 empty CONTINUATION frames", frame(HEADERS, 0, 1, b"") + b"".join(frame(0x9, 0, 1, b"") for _ in range(65)), "ENHANCE_YOUR_CALM"),
        ("a header block that does not decode (an index past both tables)", frame(HEADERS, 0x5, 1, b"\xff\x80\x10"), "COMPRESSION_ERROR"),
        ("padding longer than the frame", frame(HEADERS, 0x4 | 0x8, 1, b"\x20" + b"\x82"), "PROTOCOL_ERROR"),
        ("a frame of 16385 bytes", frame(PING, 0, 0, b"\x00" * 16385), "FRAME_SIZE_ERROR"),
    ]
    for what, data, code in connection_errors:
        got = after_preface(port, data)
        check(f"{what}: GOAWAY {code} and the connection is closed", got is not None and goaway_code(got) == code,
              repr(frames(got) if got else got))
    got = after_preface(port, b"", 1)
    check("a connection that breaks no rule stays open", got is None, repr(got))
    got = after_preface(port, b"", 10)
    check("a connection with no stream open for --idle-timeout (2 s) is sent GOAWAY NO_ERROR and closed",
          got is not None and goaway_code(got) == "NO_ERROR", repr(frames(got) if got else got))
    sock = connect(port)
    sock.sendall(PREFACE + headers(1, fields, True))
    got = read_until_closed(sock)
    check("a first frame other than SETTINGS: GOAWAY PROTOCOL_ERROR", got is not None and goaway_code(got) == "PROTOCOL_ERROR", repr(got))

    # Stream errors: the stream is reset, the connection answers the next request.
    stream_errors = [
        ("a stream that depends on itself", frame(HEADERS, 0x4 | 0x20, 1, struct.pack(">IB", 1, 16)
                                                      + b"".join(literal(n, v) for n, v in fields)), "PROTOCOL_ERROR"),
        ("a PRIORITY frame of 4 bytes", headers(1, fields, False) + frame(0x2, 0, 1, b"\x00" * 4), "PROTOCOL_ERROR_OR_FRAME_SIZE"),
        ("a WINDOW_UPDATE of 0 on a stream", headers(1, fields, False) + frame(WINDOW_UPDATE, 0, 1, struct.pack(">I", 0)), "PROTOCOL_ERROR"),
        ("DATA after the client ended the stream", headers(1, fields, False) + frame(DATA, 0x1, 1, put) + frame(DATA, 0, 1, put), "STREAM_CLOSED"),
        ("trailers without END_STREAM", headers(1, fields, False) + frame(DATA, 0, 1, put) + headers(1, [(b"x-done", b"1")], False), "PROTOCOL_ERROR"),
    ]
    for what, data, code in stream_errors:
        good = 3
        got = exchange(port, data + headers(good, fields, False) + frame(DATA, 0x1, good, put), answered(good))
        resets = {f[2]: CODES.get(int.from_bytes(f[3], "big")) for f in got if f[0] == RST_STREAM}
        expected = ["FRAME_SIZE_ERROR"] if code == "PROTOCOL_ERROR_OR_FRAME_SIZE" else [code]
        check(f"{what}: RST_STREAM {expected[0]} on its stream, and the next request is answered",
              resets.get(1) in expected and answered(good)(got) and not any(f[0] == GOAWAY for f in got), repr(got))

    # Padding, priority fields, extension frames and trailers from the client are taken.
    padded = frame(HEADERS, 0x4 | 0x8 | 0x20, 1, b"\x03" + struct.pack(">IB", 0, 16)
                   + b"".join(literal(n, v) for n, v in fields) + b"\x00\x00\x00")
    data = padded + frame(0xFA, 0, 0, b"extension") + frame(DATA, 0x8, 1, b"\x02" + put + b"\x00\x00") + headers(1, [(b"x-done", b"1")], True)
    got = exchange(port, data, answered(1))
    replies = [f for f in got if f[0] == DATA and f[2] == 1]
    check("padded HEADERS with priority fields, an extension frame, padded DATA and trailers: answered",
          replies and rpc.PutResponse.FromString(replies[0][3][5:]).header.revision > 0, repr(got))

    # Streams past SETTINGS_MAX_CONCURRENT_STREAMS are refused; the rest are served.
    data = b"".join(headers(1 + 2 * i, fields, False) for i in range(257))
    got = exchange(port, data, lambda got: any(f[0] == RST_STREAM for f in got), 10)
    resets = {f[2]: CODES.get(int.from_bytes(f[3], "big")) for f in got if f[0] == RST_STREAM}
    check("the 257th stream open at once is refused with REFUSED_STREAM, the first 256 are not",
          resets == {513: "REFUSED_STREAM"}, repr(resets))

    # A flood of streams opened and reset at once ends the connection.
    data = b"".join(headers(1 + 2 * i, fields, False) + frame(RST_STREAM, 0, 1 + 2 * i, struct.pack(">I", 8)) for i in range(201))
    got = after_preface(port, data)
    check("201 streams opened and reset: GOAWAY ENHANCE_YOUR_CALM", got is not None and goaway_code(got) == "ENHANCE_YOUR_CALM",
          repr(frames(got)[-3:] if got else got))

    # Flow control and frame sizes out: a 40 KiB answer to a client whose stream window is
    # 1,000 bytes comes in DATA frames within the window and SETTINGS_MAX_FRAME_SIZE, as
    # the client's WINDOW_UPDATEs let it, and the client's HPACK table bound is kept.
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    value = bytes(range(256)) * 160
    channel.unary_unary("/etcdserverpb.KV/Put")(rpc.PutRequest(key=b"flow", value=value).SerializeToString(), timeout=20)
    channel.close()
    for table in (4096, 0, 100):
        sock = connect(port)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        conn = h2.connection.H2Connection(config)
        conn.local_settings = h2.settings.Settings(client=True, initial_values={
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1000, h2.settings.SettingCodes.HEADER_TABLE_SIZE: table})
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        sizes, body, ended, statuses = [], b"", set(), []
        request = rpc.RangeRequest(key=b"flow").SerializeToString()
        for round_ in range(3):
            stream = conn.get_next_available_stream_id()
            conn.send_headers(stream, [(n.decode(), v.decode()) for n, v in fields[:2] + [(b":path", b"/etcdserverpb.KV/Range")] + fields[3:]])
            conn.send_data(stream, b"\x00" + struct.pack(">I", len(request)) + request, end_stream=True)
            sock.sendall(conn.data_to_send())
            sock.settimeout(10)
            body = b""
            while stream not in ended:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                for event in conn.receive_data(chunk):
                    if isinstance(event, h2.events.DataReceived):
                        sizes.append(event.flow_controlled_length)
                        body += event.data
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    if isinstance(event, h2.events.TrailersReceived):
                        statuses.append(dict(event.headers).get("grpc-status"))
                    if isinstance(event, h2.events.StreamEnded):
                        ended.add(event.stream_id)
                sock.sendall(conn.data_to_send())
        sock.close()
        got = rpc.RangeResponse.FromString(body[5:]) if len(body) > 5 else None
        check(f"a 40 KiB answer through a 1,000-byte stream window (client HPACK table {table}): DATA frames of at most 1,000 bytes, "
              "the value whole, three answers with their trailers",
              got is not None and got.kvs[0].value == value and max(sizes) <= 1000 and statuses == ["0", "0", "0"],
              repr((max(sizes) if sizes else None, statuses)))

    # A client that goes away is let go once its requests are answered.
    got = after_preface(port, headers(1, fields, False) + frame(GOAWAY, 0, 0, struct.pack(">II", 0, 0)) + frame(DATA, 0x1, 1, put))
    check("a client's GOAWAY: its open request is answered, then the connection closed",
          got is not None and any(f[0] == DATA and f[2] == 1 for f in frames(got)), repr(frames(got) if got else got))


def main(port):
    # A client that says nothing holds a connection open while the rest go on.
    silent = connect(port)

    sock = connect(port)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    answer = read_until_closed(sock)
    check("an HTTP/1 request goes to the JSON gateway: / is answered 404 and the connection closed",
          answer is not None and answer.startswith(b"HTTP/1.1 404"), repr(answer))

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

    # Malformed header blocks (RFC 9113, 8.2 and 8.3), each on a stream of its own on
    # one connection: each stream is reset with PROTOCOL_ERROR, the connection goes on
    # and answers a well-formed request after them.
    put = rpc.PutRequest(key=b"malformed", value=b"v").SerializeToString()
    fields = request_fields(b"/etcdserverpb.KV/Put")
    malformed = [
        [field for field in fields if field[0] != b":path"],
        [(b":status", b"200")] + fields,
        fields + [(b":authority", b"late")],
        fields + [(b"X-Upper", b"1")],
        fields + [(b"connection", b"close")],
        [field if field[0] != b"te" else (b"te", b"gzip") for field in fields],
        fields + [(b"x-trace", b"a\r\nb")],
    ]
    sock = connect(port)
    data = PREFACE + frame(0x4, 0, 0, b"")
    for index, block in enumerate(malformed):
        data += headers(1 + 2 * index, block, True)
    good = 1 + 2 * len(malformed)
    data += headers(good, fields, False) + frame(0x0, 0x1, good, b"\x00" + struct.pack(">I", len(put)) + put)
    sock.sendall(data)
    sock.settimeout(10)
    seen = b""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(f[0] == 0x1 and f[2] == good and f[1] & 0x1 for f in frames(seen)):
        chunk = sock.recv(65536)
        if not chunk:
            break
        seen += chunk
    resets = {f[2]: int.from_bytes(f[3], "big") for f in frames(seen) if f[0] == 0x3}
    check("each malformed header block gets RST_STREAM PROTOCOL_ERROR on its own stream",
          resets == {1 + 2 * index: 1 for index in range(len(malformed))}, repr(frames(seen)))
    answer = [f for f in frames(seen) if f[2] == good and f[0] == 0x0]
    check("the connection goes on: a well-formed request after them is answered",
          answer and rpc.PutResponse.FromString(answer[0][3][5:]).header.revision > 0, repr(frames(seen)))
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

    # Twenty unfinished 4 MiB messages, a megabyte of each sent (less the 4 KiB each
    # stream is charged): the connection holds at most 16 MiB, so from the seventeenth on
    # each is refused, the ones before are not; those are ended once the server's idle
    # timeout (2 s) passed with their messages not whole, and their bytes given back.
    ids, ended = unfinished_messages(port, 20, 4 << 20, (1 << 20) - (8 << 10))
    refused = [stream for stream in ids if ended.get(stream, (None, ""))[0] == "8" and "16 MiB" in ended[stream][1]]
    check("parts of more big messages than a connection holds: the ones past 16 MiB get RESOURCE_EXHAUSTED",
          refused == ids[16:], repr(ended))
    expired = [stream for stream in ids if ended.get(stream, (None, ""))[0] == "8" and "not whole within 2 s" in ended[stream][1]]
    check("the messages left unfinished are ended after --idle-timeout with RESOURCE_EXHAUSTED", expired == ids[:16], repr(ended))

    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    # What a connection holds is given back as requests are answered (unary) and read
    # (streaming): twenty 1 MiB requests of each kind, one after another on one
    # connection, are all answered, and none is refused for the budget.
    big = b"x" * (1 << 20)
    codes = []
    for _ in range(20):
        try:
            channel.unary_unary("/etcdserverpb.KV/Put")(rpc.PutRequest(key=b"big", value=big).SerializeToString(), timeout=20)
            codes.append(grpc.StatusCode.OK)
        except grpc.RpcError as error:
            codes.append(error.code())
    check("twenty 1 MiB unary requests in turn on one connection are each answered, none refused for the budget",
          len(codes) == 20 and grpc.StatusCode.RESOURCE_EXHAUSTED not in codes, repr(codes))
    lease = rpc.LeaseGrantResponse.FromString(channel.unary_unary("/etcdserverpb.Lease/LeaseGrant")(rpc.LeaseGrantRequest(TTL=60).SerializeToString(), timeout=20)).ID
    # Each keep-alive carries 1 MiB in a field the message does not define, which
    # protobuf skips.
    padding = b"\x7a" + bytes([0x80, 0x80, 0x40]) + big
    keep_alive = rpc.LeaseKeepAliveRequest(ID=lease).SerializeToString() + padding
    answers = queue.Queue()

    def requests():
        for _ in range(20):
            yield keep_alive
            answers.get(timeout=20)

    responses = channel.stream_stream("/etcdserverpb.Lease/LeaseKeepAlive")(requests(), timeout=60)
    got = 0
    for response in responses:
        got += rpc.LeaseKeepAliveResponse.FromString(response).ID == lease
        answers.put(None)
        if got == 20:
            break
    responses.cancel()
    check("twenty 1 MiB keep-alives in turn on one stream are each answered", got == 20, repr(got))

    # The connection's window is widened to 1 MiB by the first grant, then given back
    # once half of it was read: small requests cost the client no WINDOW_UPDATE each.
    increments, sent, (window, _) = small_messages(port, 200)
    connection = increments.pop(0, [])
    check("200 small requests on one connection: one connection WINDOW_UPDATE, widening the window to 1 MiB",
          len(connection) == 1 and window == 65535 + connection[0] - sent and window > (1 << 20) - sent,
          repr((connection, sent, window)))
    check("200 small requests: no stream WINDOW_UPDATE (each request ends its stream)", not increments, repr(dict(increments)))
    # A stream's window is given back the same way: small messages on one stream cost none.
    increments, sent, (window, stream_window) = small_messages(port, 200, lease=lease)
    increments.pop(0, None)
    check("200 small keep-alives on one stream: no stream WINDOW_UPDATE, the stream's window 1 MiB less what was sent",
          not increments and stream_window == (1 << 20) - sent, repr((dict(increments), sent, stream_window)))

    protocol_rules(port)

    put = channel.unary_unary("/etcdserverpb.KV/Put")
    put(rpc.PutRequest(key=b"after", value=b"abuse").SerializeToString(), timeout=20)
    got = rpc.RangeResponse.FromString(channel.unary_unary("/etcdserverpb.KV/Range")(rpc.RangeRequest(key=b"after").SerializeToString(), timeout=20))
    check("afterwards an ordinary request is answered", [kv.value for kv in got.kvs] == [b"abuse"], repr(got))
    check("a connection that never sent the preface is closed (serve --idle-timeout)", read_until_closed(silent, 30) is not None)


def connection_limit(port, limit):
    held = []
    for _ in range(limit):
        sock = connect(port)
        sock.sendall(PREFACE + frame(0x4, 0, 0, b""))
        held.append(sock)
    # The server's SETTINGS on each shows it took the connection.
    for sock in held:
        sock.settimeout(10)
        check("a connection within the limit is served", frames(sock.recv(65536))[:1] != [], "")
    extra = connect(port)
    extra.sendall(PREFACE + frame(0x4, 0, 0, b""))
    check("one connection past --max-connections is closed at once, unanswered", read_until_closed(extra, 10) == b"")
    held.pop().close()
    # The server frees the place when it sees the close; on a loaded machine that may
    # come after a first new connection, which is then refused like the extra one.
    deadline = time.monotonic() + 20
    while True:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        try:
            got = rpc.RangeResponse.FromString(channel.unary_unary("/etcdserverpb.KV/Range")(rpc.RangeRequest(key=b"k").SerializeToString(), timeout=20))
            break
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        finally:
            channel.close()
    check("once one of them closed a new connection is served", got.header.member_id != 0, repr(got))


if len(sys.argv) == 4 and sys.argv[2] == "--connection-limit":
    connection_limit(int(sys.argv[1]), int(sys.argv[3]))
else:
    main(int(sys.argv[1]))
