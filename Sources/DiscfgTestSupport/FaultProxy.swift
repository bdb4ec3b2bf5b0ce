import AsyncHTTPClient
import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP proxy between discfg and a DynamoDB-API server (moto) that injects faults
/// into DynamoDB calls, and records every call it saw.
///
/// Faults are drawn per call from a seeded generator with the given rates, so a run is
/// repeatable up to the order in which concurrent calls arrive. Each kind mimics what
/// DynamoDB or the network does:
///
/// - ``Fault/throughputExceeded`` and ``Fault/throttling``: 400 with
///   `ProvisionedThroughputExceededException` / `ThrottlingException`; not forwarded.
/// - ``Fault/serverError``: 500 `InternalServerError`, not forwarded.
/// - ``Fault/serverErrorAfterApplying``: forwarded — the call takes effect — then 500.
/// - ``Fault/dropAfterSending``: forwarded — the call takes effect — then the connection
///   is closed without an answer.
/// - ``Fault/delay``: forwarded after a pause.
///
/// With `only`, faults strike only the named operations. With `blackoutAfter`, the first call of that operation and every call after it lose
/// their answers (``Fault/dropAfterSending``): a network that fails for good right after a
/// write was sent.
///
/// ``set(_:)`` kills the endpoint in the middle of a test and brings it back
/// (``Mode``): calls held unanswered, or connections refused, until it is set to
/// ``Mode/pass`` again. A call the endpoint held is never forwarded.
///
/// ```swift
/// try await withServer(try await FaultProxy.start(upstream: moto.endpoint, seed: 7, rates: [.dropAfterSending: 0.1])) { proxy in
///     // point a DynamoDB client at proxy.endpoint …
///     let calls = try proxy.calls()
/// }
/// ```
public final class FaultProxy: TestServer {
    /// What the proxy does to one call.
    public enum Fault: String, Sendable, CaseIterable, Codable {
        case none
        case throughputExceeded
        case throttling
        case serverError
        case serverErrorAfterApplying
        case dropAfterSending
        case delay
        /// Held unanswered while the proxy was a black hole, then dropped; not forwarded.
        case blackHole
    }

    /// What the endpoint as a whole does, set while the proxy runs (``set(_:)``).
    public enum Mode: String, Sendable {
        /// Calls pass, with the faults drawn at the rates given at the start.
        case pass
        /// Connections are accepted and calls read, but never answered nor forwarded
        /// (until the mode changes, when they are dropped): a store that went silent.
        case blackHole
        /// The port is closed and open connections are reset: a store that is gone.
        case refuse
    }

    /// One call the proxy saw.
    public struct Call: Sendable, Codable {
        /// Arrival order, from 0.
        public var number: Int
        /// The DynamoDB operation, e.g. `TransactWriteItems`; for a GET (S3's
        /// `GetObject`), `GET` and the path, e.g. `GET /bucket/prod/app.json`.
        public var operation: String
        /// A transaction's `ClientRequestToken`.
        public var token: String?
        /// SHA-256 of the request body, to tell a retry (same body) from a new request.
        public var bodyHash: String
        /// What the proxy did.
        public var fault: Fault
        /// The status moto answered, when the call was forwarded.
        public var upstreamStatus: Int?
        /// moto's error type (`__type`), when it answered with an error.
        public var upstreamError: String?
    }

    /// `http://127.0.0.1:PORT`.
    public let endpoint: URL
    private let control: URL
    private let process: ChildProcess
    private let logPath: String

    private init(endpoint: URL, control: URL, process: ChildProcess, logPath: String) {
        self.endpoint = endpoint
        self.control = control
        self.process = process
        self.logPath = logPath
    }

    /// Starts the proxy in front of `upstream`; `rates` gives each fault's probability
    /// per DynamoDB call (the rest pass unharmed). Failing to start is an error, never a skip.
    public static func start(
        upstream: URL, seed: Int, rates: [Fault: Double], delay: Duration = .milliseconds(200),
        only: Set<String>? = nil, blackoutAfter: String? = nil
    ) async throws -> FaultProxy {
        let port = try MotoServer.freeLoopbackPort()
        let controlPort = try MotoServer.freeLoopbackPort()
        let logPath = NSTemporaryDirectory() + "discfg-fault-proxy-\(port).jsonl"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let rateArgument = String(decoding: try JSONEncoder().encode(Dictionary(uniqueKeysWithValues: rates.map { ($0.key.rawValue, $0.value) })), as: UTF8.self)
        let delaySeconds: Double = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        let onlyArgument: String = only.map { $0.sorted().joined(separator: ",") } ?? ""
        let arguments: [String] = [
            "-c", script, String(port), String(upstream.port ?? 80), String(seed), rateArgument,
            String(delaySeconds), logPath, blackoutAfter ?? "", onlyArgument, String(controlPort),
        ]
        let process = try ChildProcess.launch(
            "python3", arguments, environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment), stdout: .discard
        )
        let proxy = FaultProxy(
            endpoint: URL(string: "http://127.0.0.1:\(port)")!, control: URL(string: "http://127.0.0.1:\(controlPort)")!, process: process, logPath: logPath
        )
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let ended = process.output.termination {
                await proxy.stop()
                throw MotoServer.StartError(description: "the fault proxy \(ended): \(process.output.stderr)")
            }
            if await proxy.answers() { return proxy }
            try await Task.sleep(for: .milliseconds(100))
        }
        await proxy.stop()
        throw MotoServer.StartError(description: "the fault proxy did not answer on port \(port) within 20 s: \(process.output.stderr)")
    }

    /// Every DynamoDB call (and GET) so far, in arrival order.
    public func calls() throws -> [Call] {
        let text = try String(contentsOfFile: logPath, encoding: .utf8)
        let decoder = JSONDecoder()
        return try text.split(separator: "\n").map { try decoder.decode(Call.self, from: Data($0.utf8)) }.sorted { $0.number < $1.number }
    }

    /// Sets what the endpoint does from now on; returns once it does it (for
    /// ``Mode/refuse``, once the port is closed and open connections are reset).
    public func set(_ mode: Mode) async throws {
        var request = HTTPClientRequest(url: control.absoluteString + "/mode")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: mode.rawValue))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 16)
        guard response.status == .ok else {
            throw MotoServer.StartError(description: "the fault proxy did not take mode \(mode.rawValue): \(response.status)")
        }
    }

    /// Kills the proxy, waits until it has exited, and removes its log.
    public func stop() async {
        await process.kill()
        try? FileManager.default.removeItem(atPath: logPath)
    }

    private func answers() async -> Bool {
        var request = HTTPClientRequest(url: endpoint.absoluteString + "/fault-proxy/ready")
        request.method = .GET
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(1)) else { return false }
        _ = try? await response.body.collect(upTo: 1 << 16)
        return response.status == .ok
    }

    /// The proxy: a threaded HTTP/1.1 server forwarding each request over a fresh
    /// connection to the upstream. Arguments: port, upstream port, seed, rates (JSON),
    /// delay (seconds), log path, blackout operation (or empty), operations faults
    /// strike (comma-separated, or empty for all), control port (`POST /mode` with a
    /// ``Mode``'s name).
    static let script = #"""
        import hashlib, http.client, json, random, socket, sys, threading, time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        port, upstream, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
        rates, delay, log_path, blackout = json.loads(sys.argv[4]), float(sys.argv[5]), sys.argv[6], sys.argv[7]
        only = set(filter(None, sys.argv[8].split(",")))
        control_port = int(sys.argv[9])
        rng = random.Random(seed)
        lock = threading.Lock()
        changed = threading.Condition(lock)
        state = {"number": 0, "blackout": False, "mode": "pass", "server": None}
        connections = set()
        log = open(log_path, "a")

        def choose():
            draw, total = rng.random(), 0.0
            for kind in sorted(rates):
                total += rates[kind]
                if draw < total:
                    return kind
            return "none"

        ERRORS = {
            "throughputExceeded": (400, "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", "The level of configured provisioned throughput for the table was exceeded."),
            "throttling": (400, "com.amazonaws.dynamodb.v20120810#ThrottlingException", "Rate of requests exceeds the allowed throughput."),
            "serverError": (500, "com.amazonaws.dynamodb.v20120810#InternalServerError", "Internal server error"),
            "serverErrorAfterApplying": (500, "com.amazonaws.dynamodb.v20120810#InternalServerError", "Internal server error"),
        }

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                with lock:
                    connections.add(self.connection)

            def finish(self):
                try:
                    super().finish()
                finally:
                    with lock:
                        connections.discard(self.connection)

            def drop(self):
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def answer(self, status, headers, body):
                self.send_response(status)
                for name, value in headers:
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def forward(self, body):
                connection = http.client.HTTPConnection("127.0.0.1", upstream, timeout=60)
                connection.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    if name.lower() not in ("content-length", "connection"):
                        connection.putheader(name, value)
                connection.putheader("Content-Length", str(len(body)))
                connection.endheaders(body)
                response = connection.getresponse()
                data = response.read()
                connection.close()
                return response.status, response.getheaders(), data

            def do_GET(self):
                if self.path == "/fault-proxy/ready":
                    self.answer(200, [], b"ready")
                    return
                status, headers, data = self.forward(b"")
                # Recorded (an S3 GetObject, say), never struck by a fault.
                with lock:
                    record = {"number": state["number"], "operation": "GET " + self.path, "bodyHash": hashlib.sha256(b"").hexdigest(),
                              "fault": "none", "upstreamStatus": status}
                    state["number"] += 1
                    log.write(json.dumps(record) + "\n")
                    log.flush()
                self.answer(status, headers, data)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                operation = (self.headers.get("X-Amz-Target") or "").split(".")[-1]
                token = None
                if operation == "TransactWriteItems":
                    try:
                        token = json.loads(body).get("ClientRequestToken")
                    except ValueError:
                        pass
                with lock:
                    number = state["number"]
                    state["number"] += 1
                    if operation and operation == blackout:
                        state["blackout"] = True
                    struck = operation and (not only or operation in only)
                    fault = "dropAfterSending" if state["blackout"] else (choose() if struck else "none")
                    if state["mode"] != "pass":
                        fault = "blackHole"
                record = {"number": number, "operation": operation, "token": token,
                          "bodyHash": hashlib.sha256(body).hexdigest(), "fault": fault}
                try:
                    if fault == "blackHole":
                        with changed:
                            changed.wait_for(lambda: state["mode"] != "blackHole", timeout=600)
                        self.drop()
                        return
                    if fault in ("throughputExceeded", "throttling", "serverError"):
                        status, kind, message = ERRORS[fault]
                        self.answer(status, [("Content-Type", "application/x-amz-json-1.0"), ("x-amzn-RequestId", "fault-%d" % number)],
                                    json.dumps({"__type": kind, "message": message}).encode())
                        return
                    if fault == "delay":
                        time.sleep(delay)
                    status, headers, data = self.forward(body)
                    record["upstreamStatus"] = status
                    if status >= 400:
                        try:
                            record["upstreamError"] = json.loads(data).get("__type", "").split("#")[-1]
                        except ValueError:
                            pass
                    if fault == "dropAfterSending":
                        self.drop()
                        return
                    if fault == "serverErrorAfterApplying":
                        status, kind, message = ERRORS[fault]
                        self.answer(status, [("Content-Type", "application/x-amz-json-1.0")],
                                    json.dumps({"__type": kind, "message": message}).encode())
                        return
                    self.answer(status, headers, data)
                finally:
                    with lock:
                        log.write(json.dumps(record) + "\n")
                        log.flush()

        class Control(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                mode = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                if self.path != "/mode" or mode not in ("pass", "blackHole", "refuse"):
                    self.send_response(400)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                with changed:
                    state["mode"] = mode
                    server = state["server"] if mode == "refuse" else None
                    if server is not None:
                        state["server"] = None
                    changed.notify_all()
                if server is not None:
                    server.shutdown()
                    server.server_close()
                    with lock:
                        open_now = list(connections)
                    for connection in open_now:
                        try:
                            connection.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                with changed:
                    # Back from refusing: answered once the port is open again.
                    changed.wait_for(lambda: state["mode"] == "refuse" or state["server"] is not None, timeout=10)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        ThreadingHTTPServer.daemon_threads = True
        controller = ThreadingHTTPServer(("127.0.0.1", control_port), Control)
        threading.Thread(target=controller.serve_forever, daemon=True).start()
        while True:
            with changed:
                changed.wait_for(lambda: state["mode"] != "refuse")
            server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
            with changed:
                state["server"] = server
                changed.notify_all()
            server.serve_forever()
        """#
}
