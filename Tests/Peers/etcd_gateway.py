#!/usr/bin/env python3
"""etcd's HTTP/JSON gateway, spoken over plain HTTP/1.1 (the standard library only).

    etcd_gateway.py compare ETCD_PORT DISCFG_PORT OFFSET
        The same requests to a real etcd and to discfg, one after the other, their
        answers compared field by field: HTTP status, content type, every JSON field,
        revisions in discfg's numbering (etcd's less OFFSET), the header's cluster_id,
        member_id and raft_term checked present and not compared. Prints each
        difference; exits 1 if there is any.
    etcd_gateway.py watch ETCD_PORT DISCFG_PORT OFFSET
        A streaming /v3/watch on both, changes made through the gateway, the lines
        compared; and /v3/lease/keepalive.
    etcd_gateway.py attack PORT
        Bad input to discfg alone: each answer is checked to be etcd's refusal, at a
        bounded cost.
"""
import base64
import json
import socket
import sys
import time
import http.client


def b64(text):
    return base64.b64encode(text.encode()).decode()


def call(port, path, body=None, method="POST", headers=None, raw=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = raw if raw is not None else (None if body is None else json.dumps(body))
    connection.request(method, path, body=data, headers=headers or {})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, response.getheader("content-type", ""), text


REVISIONS = {"revision", "create_revision", "mod_revision", "compact_revision"}


def normalized(value, offset, top=True):
    if isinstance(value, list):
        return [normalized(v, offset, False) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, field in value.items():
        if key == "header":
            header = dict(field)
            if top:
                for name in ("cluster_id", "member_id", "raft_term"):
                    if int(header.pop(name, "0")) == 0:
                        out.setdefault("problems", []).append("header without " + name)
            # etcd's revisions start at 1, so its headers always hold one (clients read
            # it unguarded: patroni's result['header']['revision']); discfg's config
            # starts at 0, and must say "0" rather than leave it out.
            if "revision" not in header:
                out.setdefault("problems", []).append("header without revision")
            header["revision"] = str(max(int(header.get("revision", "0")) - offset, 0))
            out[key] = header
        elif key in REVISIONS and isinstance(field, str):
            number = int(field)
            out[key] = str(number - offset if number > 0 and key != "compact_revision" else number)
        else:
            # A streaming answer's line holds its response under "result".
            out[key] = normalized(field, offset, key == "result")
    return out


def parsed(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


class Comparison:
    def __init__(self, etcd, discfg, offset):
        self.etcd, self.discfg, self.offset = etcd, discfg, offset
        self.failures = 0

    def differ(self, what, on_etcd, on_discfg):
        self.failures += 1
        print("DIFFERS: %s\n  etcd:   %s\n  discfg: %s" % (what, on_etcd, on_discfg))

    def same(self, path, body=None, method="POST", words=True, drop=(), raw=None):
        """Both answer the same; `words` False compares an error's code, not its text."""
        e = call(self.etcd, path, body, method, raw=raw)
        d = call(self.discfg, path, body, method, raw=raw)
        what = "%s %s %s" % (method, path, raw if raw is not None else json.dumps(body))
        if e[0] != d[0] or e[1].split(";")[0] != d[1].split(";")[0]:
            return self.differ(what + " (status, type)", e[:2], d[:2])
        ej, dj = parsed(e[2]), parsed(d[2])
        if isinstance(ej, dict) and isinstance(dj, dict):
            ej, dj = normalized(ej, self.offset), normalized(dj, 0)
            for name in drop:
                ej.pop(name, None)
                dj.pop(name, None)
            if not words and "error" in ej:
                ej = {"code": ej.get("code"), "has_message": bool(ej.get("message"))}
                dj = {"code": dj.get("code"), "has_message": bool(dj.get("message")) and dj.get("error") == dj.get("message")}
        if ej != dj:
            self.differ(what, e[2], d[2])
        return ej


def compare(etcd, discfg, offset):
    c = Comparison(etcd, discfg, offset)
    foo, bar = b64("gw/foo"), b64("gw/bar")
    # Before any write: both at revision 1, where an empty etcd starts.
    c.same("/v3/kv/range", {"key": foo})
    c.same("/v3/kv/txn", {"success": [{"request_range": {"key": foo}}]})
    c.same("/v3/lease/leases", {})
    c.same("/v3/kv/put", {"key": foo, "value": b64("one")})
    c.same("/v3/kv/put", {"key": bar, "value": b64("two"), "prev_kv": True})
    c.same("/v3/kv/put", {"key": foo, "value": b64("three"), "prev_kv": True})
    c.same("/v3/kv/range", {"key": foo})
    c.same("/v3/kv/range", {"key": b64("gw/"), "range_end": b64("gw0")})
    c.same("/v3/kv/range", {"key": b64("gw/"), "range_end": b64("gw0"), "sort_order": "DESCEND", "sort_target": "KEY", "limit": "1"})
    c.same("/v3/kv/range", {"key": b64("gw/"), "range_end": b64("gw0"), "count_only": True})
    c.same("/v3/kv/range", {"key": b64("gw/"), "rangeEnd": b64("gw0"), "keysOnly": True})
    c.same("/v3/kv/range", {"key": foo, "unknown_field": 1})
    c.same("/v3beta/kv/range", {"key": foo})
    c.same("/v3/kv/txn", {
        "compare": [{"key": foo, "target": "VALUE", "result": "EQUAL", "value": b64("three")}],
        "success": [{"request_put": {"key": foo, "value": b64("four")}}, {"request_range": {"key": foo}}],
        "failure": [{"request_delete_range": {"key": foo}}],
    })
    c.same("/v3/kv/txn", {
        "compare": [{"key": foo, "target": "VERSION", "result": "EQUAL", "version": "0"}],
        "success": [{"request_put": {"key": foo, "value": b64("five")}}],
        "failure": [{"request_range": {"key": foo}}],
    })
    c.same("/v3/kv/txn", {"compare": [{"key": foo, "target": "CREATE", "result": "GREATER", "create_revision": "0"}]})
    c.same("/v3/kv/deleterange", {"key": bar, "prev_kv": True})
    c.same("/v3/kv/deleterange", {"key": bar})
    c.same("/v3/kv/compaction", {"revision": str(10_000_000)})
    c.same("/v3/kv/put", {"key": foo, "value": b64("x"), "lease": "12345"})
    c.same("/v3/lease/grant", {"TTL": "60", "ID": "4242"})
    c.same("/v3/lease/grant", {"TTL": "60", "ID": "4242"})
    c.same("/v3/kv/put", {"key": bar, "value": b64("leased"), "lease": "4242"})
    c.same("/v3/lease/timetolive", {"ID": "4242", "keys": True}, drop=("TTL",))
    c.same("/v3/kv/lease/timetolive", {"ID": "4242"}, drop=("TTL",))
    c.same("/v3/lease/timetolive", {"ID": "999"})
    c.same("/v3/lease/leases", {})
    c.same("/v3/kv/lease/leases", {})
    c.same("/v3/lease/revoke", {"ID": "4242"})
    c.same("/v3/kv/range", {"key": bar})
    c.same("/v3/kv/lease/revoke", {"ID": "4242"})
    c.same("/v3/lease/keepalive", {"ID": "777"})
    c.same("/v3/auth/authenticate", {"name": "root", "password": "pw"})
    # Nested transactions: every compare decided before any op runs, a nested answer's
    # empty header, a range that sees the puts before it, one revision; duplicate keys
    # across the tree refused as etcd refuses them; a key put by both branches of one
    # nested txn allowed; nesting 16 deep, discfg's limit.
    n1, n2 = b64("gwn/1"), b64("gwn/2")
    c.same("/v3/kv/put", {"key": n1, "value": b64("a")})
    c.same("/v3/kv/txn", {
        "compare": [{"key": n1, "target": "VERSION", "result": "EQUAL", "version": "1"}],
        "success": [
            {"request_put": {"key": n1, "value": b64("b")}},
            {"request_txn": {
                "compare": [{"key": n1, "target": "VALUE", "result": "EQUAL", "value": b64("a")}],
                "success": [{"request_range": {"key": n1}}, {"request_put": {"key": n2, "value": b64("c"), "prev_kv": True}}],
                "failure": [{"request_delete_range": {"key": n1}}],
            }},
            {"request_txn": {"compare": [{"key": n2, "target": "VERSION", "result": "GREATER", "version": "0"}],
                             "success": [{"request_range": {"key": n1}}], "failure": [{"request_range": {"key": n2}}]}},
            {"request_range": {"key": b64("gwn/"), "range_end": b64("gwn0")}},
        ],
    })
    c.same("/v3/kv/txn", {"success": [{"request_txn": {"success": [{"request_range": {"key": n1}}]}}]})
    c.same("/v3/kv/txn", {"success": [{"request_put": {"key": n1, "value": b64("x")}},
                                      {"request_txn": {"success": [{"request_put": {"key": n1, "value": b64("y")}}]}}]})
    c.same("/v3/kv/txn", {"failure": [{"request_txn": {"success": [{"request_put": {"key": n2, "value": b64("then")}}],
                                                       "failure": [{"request_put": {"key": n2, "value": b64("else")}}]}},
                                      {"request_delete_range": {"key": b64("gwn/"), "range_end": b64("gwn0")}}]})
    c.same("/v3/kv/txn", {"compare": [{"key": n2, "target": "VERSION", "result": "EQUAL", "version": "0"}],
                          "failure": [{"request_txn": {"success": [{"request_put": {"key": n2, "value": b64("then")}}],
                                                       "failure": [{"request_put": {"key": n2, "value": b64("else")}}]}}]})
    deep = {"success": [{"request_put": {"key": n1, "value": b64("deep")}}]}
    for _ in range(15):
        deep = {"success": [{"request_txn": deep}]}
    c.same("/v3/kv/txn", deep)
    c.same("/v3/kv/range", {"key": b64("gwn/"), "range_end": b64("gwn0")})
    # Bad input: etcd's status and code (the words of a JSON decoder differ).
    c.same("/v3/kv/range", {})
    c.same("/v3/kv/range", raw="")
    c.same("/v3/kv/range", raw="null")
    c.same("/v3/kv/range", raw=" null \n")
    c.same("/v3/kv/range", raw="{key", words=False)
    c.same("/v3/kv/range", raw="[]", words=False)
    c.same("/v3/kv/range", raw='{"key": 5}', words=False)
    c.same("/v3/kv/range", raw='{"key": "!!!!"}', words=False)
    c.same("/v3/kv/range", raw='{"limit": "x"}', words=False)
    c.same("/v3/kv/put", {"value": b64("no key")})
    # Refusals the services make, answered through the gateway with etcd's status and words.
    c.same("/v3/kv/range", {"key": foo, "revision": "1000000"})
    c.same("/v3/kv/txn", {"success": [{"request_put": {"key": foo, "value": b64("a")}}, {"request_put": {"key": foo, "value": b64("b")}}]})
    c.same("/v3/kv/txn", {"success": [{"request_range": {"key": foo, "revision": "1000000"}}]})
    c.same("/v3/lease/grant", {"TTL": "60", "ID": "4243"})
    c.same("/v3/lease/grant", {"TTL": "60", "ID": "4243"})
    c.same("/v3/lease/revoke", {"ID": "4243"})
    c.same("/v3/kv/range", method="GET")
    c.same("/v3/kv/range", {"key": foo}, method="PUT")
    c.same("/version", {}, method="POST")
    c.same("/v3/nothing/here", {})
    c.same("/v3alpha/kv/range", {"key": foo})
    c.same("/nothing", {})
    # Maintenance through the gateway, and the member's health probe.
    c.same("/v3/maintenance/defragment", {})
    c.same("/v3/maintenance/transfer-leadership", {"targetID": "1"})
    c.same("/health", method="GET")
    # The cluster's shape: one member whose id is the header's, serving its own URL.
    for port in (etcd, discfg):
        status, _, text = call(port, "/v3/cluster/member/list", {})
        answer = json.loads(text)
        member = answer["members"][0] if len(answer.get("members", [])) == 1 else {}
        if status != 200 or member.get("ID") != answer["header"]["member_id"] or "http://127.0.0.1:%d" % port not in member.get("clientURLs", []):
            c.differ("member list on %d" % port, "one member, the header's, on its URL", text)
        status, _, text = call(port, "/v3/maintenance/status", {})
        answer = json.loads(text)
        if status != 200 or answer.get("leader") != answer["header"]["member_id"] or not answer.get("version", "").startswith("3.") or "raftIndex" not in answer:
            c.differ("status on %d" % port, "the leader, a 3.x version, a raft index", text)
        status, _, text = call(port, "/v3/maintenance/hash", {})
        answer = json.loads(text)
        if status != 200 or "hash" not in answer or answer["header"].get("member_id") is None:
            c.differ("hash on %d" % port, "a hash under the member's header", text)
        status, kind, text = call(port, "/version", method="GET")
        answer = json.loads(text)
        if status != 200 or kind != "application/json" or sorted(answer) != ["etcdcluster", "etcdserver"]:
            c.differ("version on %d" % port, "etcdserver and etcdcluster", text)
    # etcd 3.5.11's liveness and readiness probes (etcd 3.4 has neither).
    for path in ("/livez", "/readyz"):
        status, kind, text = call(discfg, path, method="GET")
        if status != 200 or text != "ok":
            c.differ(path, "200 ok", "%d %s" % (status, text))
    print("compared; %d differences" % c.failures)
    return c.failures == 0


def watch_lines(port, body, count, during=None):
    """The first `count` lines of a streaming answer; `during` runs once it began."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    data = json.dumps(body) if not isinstance(body, str) else body
    sock.sendall(("POST /v3/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data)).encode())
    reader = sock.makefile("rb")
    status = reader.readline().decode()
    while reader.readline() not in (b"\r\n", b""):
        pass
    lines = []
    started = False
    while len(lines) < count:
        size = reader.readline().strip()
        if not size or int(size, 16) == 0:
            break
        chunk = reader.read(int(size, 16))
        reader.readline()
        for line in chunk.decode().splitlines():
            lines.append(json.loads(line))
        if not started and during:
            started = True
            during()
    sock.close()
    return status.split()[1], lines


def watch(etcd, discfg, offset):
    c = Comparison(etcd, discfg, offset)
    key = b64("gw/watched")

    def changes(port):
        def run():
            call(port, "/v3/kv/put", {"key": key, "value": b64("a")})
            call(port, "/v3/kv/put", {"key": key, "value": b64("b")})
            call(port, "/v3/kv/deleterange", {"key": key})
        return run

    answers = {}
    for name, port, off in (("etcd", etcd, offset), ("discfg", discfg, 0)):
        status, lines = watch_lines(port, {"create_request": {"key": key, "prev_kv": True}}, 4, changes(port))
        answers[name] = (status, [normalized(line, off) for line in lines])
    if answers["etcd"] != answers["discfg"]:
        c.differ("watch with prev_kv over put, put, delete", answers["etcd"], answers["discfg"])
    # Two creates in one body; then history from a revision.
    for name, port, off in (("etcd", etcd, offset), ("discfg", discfg, 0)):
        body = json.dumps({"create_request": {"key": key}}) + json.dumps({"create_request": {"key": b64("gw/other")}})
        status, lines = watch_lines(port, body, 2)
        answers[name] = (status, [normalized(line, off) for line in lines])
    if answers["etcd"] != answers["discfg"]:
        c.differ("two creates in one body", answers["etcd"], answers["discfg"])
    for port in (etcd, discfg):
        call(port, "/v3/lease/grant", {"TTL": "30", "ID": "99"})
    e = call(etcd, "/v3/lease/keepalive", {"ID": "99"})
    d = call(discfg, "/v3/lease/keepalive", {"ID": "99"})
    if (e[0], normalized(json.loads(e[2]), offset)) != (d[0], normalized(json.loads(d[2]), 0)):
        c.differ("keepalive", e, d)
    print("watched; %d differences" % c.failures)
    return c.failures == 0


def server_side_state(server_port, client_port):
    """The TCP state (hex, as /proc/net/tcp writes it; "01" established) of the server's
    end of a loopback connection, or None when it is gone."""
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            local, remote = fields[1].split(":"), fields[2].split(":")
            if int(local[1], 16) == server_port and int(remote[1], 16) == client_port:
                return fields[3]
    return None


def expect(condition, what):
    if not condition:
        print("FAILED: " + what)
    return condition


def attack(port):
    ok = True
    # A body over the limit, declared: refused before it is read, and the connection closed.
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 900000000\r\n\r\n{")
    answer = sock.recv(65536).decode()
    ok &= expect(" 429 " in answer.split("\r\n")[0] and '"code":8' in answer, "a declared huge body: " + answer[:300])
    sock.close()
    # A body over the limit, chunked: refused once it passes it.
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
    answer = b""
    try:
        chunk = b"%x\r\n" % (1 << 20) + b"a" * (1 << 20) + b"\r\n"
        for _ in range(8):
            sock.sendall(chunk)
    except OSError:
        pass
    sock.settimeout(30)
    try:
        answer = sock.recv(65536)
    except OSError:
        pass
    ok &= expect(b" 429 " in answer.split(b"\r\n")[0], "a chunked huge body: %r" % answer[:300])
    sock.close()
    # A slow body: the server's idle timeout (2 s here) ends it with an answer.
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    started = time.monotonic()
    sock.sendall(b"POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"key\"")
    answer = sock.recv(65536).decode()
    elapsed = time.monotonic() - started
    ok &= expect(" 408 " in answer.split("\r\n")[0] and elapsed < 10, "a slow body after %.1f s: %s" % (elapsed, answer[:300]))
    sock.close()
    # A connection that says nothing is closed after the idle timeout.
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    started = time.monotonic()
    ok &= expect(sock.recv(10) == b"" and time.monotonic() - started < 10, "a silent connection was not closed")
    sock.close()
    # Garbage that is not HTTP: 400, closed.
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")
    answer = sock.recv(65536).decode(errors="replace")
    ok &= expect(" 400 " in answer.split("\r\n")[0], "garbage: " + answer[:200])
    sock.close()
    # Nested transactions past discfg's bounds (etcd has none): 17 deep, ten thousand
    # deep, and a fan-out of 128 nested txns of 8 compares each; refused with
    # INVALID_ARGUMENT before the body is decoded, nothing written.
    def nest(depth, inner):
        return ('{"success":[{"request_txn":' * (depth - 1)) + inner + (']}}' * (depth - 1))
    put = '{"success":[{"request_put":{"key":"%s","value":"%s"}}]}' % (b64("gw/nested"), b64("no"))
    for depth in (17, 10000):
        started = time.monotonic()
        status, _, text = call(port, "/v3/kv/txn", raw=nest(depth, put))
        ok &= expect(status == 400 and '"code":3' in text and "nest at most 16 deep" in text and time.monotonic() - started < 5,
                     "a txn nested %d deep: %d %s" % (depth, status, text[:200]))
    wide = {"success": [{"request_txn": {"compare": [{"key": b64("gw/nested")}] * 8}}] * 128}
    status, _, text = call(port, "/v3/kv/txn", wide)
    ok &= expect(status == 400 and '"code":3' in text and "1024" in text, "128 nested txns of 8 compares: %d %s" % (status, text[:200]))
    status, _, text = call(port, "/v3/kv/range", {"key": b64("gw/nested")})
    ok &= expect(status == 200 and "kvs" not in json.loads(text), "a refused nested txn wrote: " + text[:200])
    # Too many requests in one streaming body.
    status, _, text = call(port, "/v3/lease/keepalive", raw="{}" * 1001)
    ok &= expect(status == 400 and '"code":3' in text, "1001 keep-alives in one body: %d %s" % (status, text[:200]))
    # Keep-alive connections: three requests on one, answered in order.
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for value in ("1", "2", "3"):
        connection.request("POST", "/v3/kv/put", body=json.dumps({"key": b64("gw/kept"), "value": b64(value)}))
        response = connection.getresponse()
        response.read()
        ok &= expect(response.status == 200, "put %s on a kept connection: %d" % (value, response.status))
    connection.request("POST", "/v3/kv/range", body=json.dumps({"key": b64("gw/kept")}))
    text = connection.getresponse().read().decode()
    ok &= expect(json.loads(text)["kvs"][0]["value"] == b64("3"), "range on a kept connection: " + text)
    connection.close()
    # A watch nobody reads: the server stops writing to it and closes it after its
    # write timeout (2 s here), and still answers others.
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    body = json.dumps({"create_request": {"key": b64("gw/flood")}})
    sock.sendall(("POST /v3/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)).encode())
    big = b64("v" * 200000)
    for _ in range(40):
        call(port, "/v3/kv/put", {"key": b64("gw/flood"), "value": big})
    time.sleep(4)
    status, _, _ = call(port, "/v3/kv/range", {"key": b64("gw/flood"), "count_only": True})
    ok &= expect(status == 200, "a range while a watch is unread: %d" % status)
    # The server closed its end (its kernel may still hold bytes for the client's shut
    # window: FIN-WAIT-1 with a send queue, which the kernel drains, not the server).
    client_port = sock.getsockname()[1]
    deadline = time.monotonic() + 10
    while server_side_state(port, client_port) == "01" and time.monotonic() < deadline:
        time.sleep(0.2)
    state = server_side_state(port, client_port)
    ok &= expect(state != "01", "the unread watch's connection is still open on the server (state %s)" % state)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()
    print("attacked; %s" % ("all refused as etcd refuses" if ok else "FAILED"))
    return ok


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "compare":
        sys.exit(0 if compare(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])) else 1)
    if mode == "watch":
        sys.exit(0 if watch(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])) else 1)
    if mode == "attack":
        sys.exit(0 if attack(int(sys.argv[2])) else 1)
    sys.exit("unknown mode " + mode)
