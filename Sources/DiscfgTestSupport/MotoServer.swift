import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real DynamoDB-API server (`moto_server`) on a free loopback port, for tests and the benchmark.
///
/// Failing to start is a test failure, never a skip: the tests exist to prove the client against
/// a real implementation of the protocol.
public final class MotoServer: TestServer {
    /// Why moto_server could not be started.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong and how to fix it.
        public let description: String
    }

    /// How to install moto.
    public static let installHint = "install it with: pip install 'moto[server]'"

    /// The loopback port it listens on.
    public let port: Int
    private let process: ChildProcess
    private let logPath: String

    /// `http://127.0.0.1:PORT`.
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(port: Int, process: ChildProcess, logPath: String) {
        self.port = port
        self.process = process
        self.logPath = logPath
    }

    /// Starts `moto_server -H 127.0.0.1 -p PORT` and waits (up to `timeout`) until it answers
    /// HTTP. Python takes seconds to load moto, and far longer on a busy machine.
    /// `environment` adds moto settings, e.g. `INITIAL_NO_AUTH_ACTION_COUNT` to enforce IAM
    /// after that many requests.
    public static func start(timeout: Duration = .seconds(90), environment: [String: String] = [:]) async throws -> MotoServer {
        let port = try freeLoopbackPort()
        let logPath = NSTemporaryDirectory() + "discfg-moto-\(port).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let process: ChildProcess
        do {
            process = try ChildProcess.launch(
                "python3", ["-c", serializedServer, "-H", "127.0.0.1", "-p", String(port)],
                environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment)
                    .merging(environment) { _, setting in setting },
                stdout: .file(logPath), stderr: .file(logPath)
            )
        } catch {
            throw StartError(description: "cannot launch moto_server (\(error)); \(installHint)")
        }
        let server = MotoServer(port: port, process: process, logPath: logPath)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if let ended = process.output.termination {
                let output = server.logTail()
                let missing = ended == .exited(127)
                    ? "python3 was not found on PATH; \(installHint)"
                    : "moto_server \(ended); \(installHint) if it is missing"
                throw StartError(description: "\(missing)\n\(output)")
            }
            if await server.answers() { return server }
            try await Task.sleep(for: .milliseconds(200))
        }
        await server.stop()
        throw StartError(description: "moto_server did not answer on port \(port) within \(timeout); \(installHint)\n\(server.logTail())")
    }

    /// `moto_server`, with three changes: requests are handled one at a time, a
    /// `TransactWriteItems` copies only what it may have to put back, and a `Query` reads
    /// only the partition it names.
    ///
    /// moto's server is threaded and its DynamoDB backend takes no lock, so two concurrent
    /// `TransactWriteItems` can both pass their conditions — the atomicity real DynamoDB
    /// guarantees and discfg's optimistic locking relies on. Serializing requests gives
    /// moto DynamoDB's semantics; connections are still accepted concurrently.
    ///
    /// To undo a failed transaction, moto deep-copies the table once per action, before
    /// any action runs: 100 copies of the whole table, stream records included, a cost that
    /// grows with everything the table ever held (a 3,000-key change took 90 s and moto's
    /// memory passed 4 GB). Here the copy is made once per transaction and shares what the
    /// transaction cannot change: the item dictionaries are copied, only the items its
    /// actions name are deep-copied (an update changes its item in place), and the stream's
    /// record list is copied, not its records (a 5,000-key import: 9 s).
    ///
    /// A `Query` of the table or of a local index sorted every item of the table and
    /// deep-copied its page: here it reads the one partition it names, and its page is
    /// handed out, not copied (nothing changes it on its way out). Where moto's code
    /// differs from what this expects, it is left as it is.
    static let serializedServer = """
        import copy, sys, threading, types
        from moto.moto_server import werkzeug_app
        lock = threading.Lock()
        handle = werkzeug_app.DomainDispatcherApplication.__call__
        def serialized(self, environ, start_response):
            with lock:
                return handle(self, environ, start_response)
        werkzeug_app.DomainDispatcherApplication.__call__ = serialized
        try:
            import moto.dynamodb.models as backend
            transact = backend.DynamoDBBackend.transact_write_items
            def copy_table(table, transact_items):
                try:
                    copied = copy.copy(table)
                    copied.items = copy.copy(table.items)
                    if table.range_key_attr is not None:
                        for hash_value, ranged in table.items.items():
                            copied.items[hash_value] = dict(ranged)
                    for entry in transact_items:
                        _, op = next(iter(entry.items()))
                        if op.get("TableName") != table.name:
                            continue
                        key = op.get("Key") or op.get("Item") or {}
                        hash_value = backend.DynamoType(key[table.hash_key_attr])
                        if table.range_key_attr is None:
                            if hash_value in copied.items:
                                copied.items[hash_value] = copy.deepcopy(copied.items[hash_value])
                            continue
                        range_value = backend.DynamoType(key[table.range_key_attr])
                        ranged = copied.items.get(hash_value)
                        if ranged is not None and range_value in ranged:
                            ranged[range_value] = copy.deepcopy(ranged[range_value])
                    shard = table.stream_shard
                    if shard is not None:
                        copied.stream_shard = copy.copy(shard)
                        copied.stream_shard.items = list(shard.items)
                        copied.stream_shard.table = copied
                    return copied
                except (AttributeError, KeyError, TypeError):
                    return copy.deepcopy(table)
            def copying_each_table_once(self, transact_items):
                copies = {}
                def deepcopy(value, memo=None):
                    if isinstance(value, backend.Table):
                        if id(value) not in copies:
                            copies[id(value)] = copy_table(value, transact_items)
                        return copies[id(value)]
                    return copy.deepcopy(value, memo)
                backend.copy = types.SimpleNamespace(deepcopy=deepcopy)
                try:
                    return transact(self, transact_items)
                finally:
                    backend.copy = copy
            table_module = sys.modules[backend.Table.__module__]
            table_query = backend.Table.query
            table_items = backend.Table.all_items
            def partition_items(self):
                partition = getattr(self, "_discfg_partition", None)
                if partition is None:
                    return table_items(self)
                return sorted(self.items.get(partition, {}).values(), key=lambda item: item.range_key)
            sharing = types.SimpleNamespace(deepcopy=lambda value, memo=None: list(value) if isinstance(value, list) else copy.deepcopy(value, memo))
            def partition_query(self, hash_key, *args, **kwargs):
                index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
                local = index_name is None or any(index.name == index_name for index in (self.indexes or []))
                if not local or self.range_key_attr is None or hash_key is None or table_module.copy is not copy:
                    return table_query(self, hash_key, *args, **kwargs)
                self._discfg_partition = hash_key
                table_module.copy = sharing
                try:
                    return table_query(self, hash_key, *args, **kwargs)
                finally:
                    self._discfg_partition = None
                    table_module.copy = copy
            if getattr(table_module, "copy", None) is copy:
                backend.Table.all_items = partition_items
                backend.Table.query = partition_query
            if backend.copy is copy and isinstance(backend.Table, type):
                backend.DynamoDBBackend.transact_write_items = copying_each_table_once
        except (ImportError, AttributeError):
            pass
        from moto.server import main
        main(sys.argv[1:])
        """

    /// Kills the server, waits until it has exited, and removes its log. SIGKILL: moto
    /// keeps nothing worth flushing.
    public func stop() async {
        await process.kill()
        try? FileManager.default.removeItem(atPath: logPath)
    }

    private func answers() async -> Bool {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/moto-api/")
        request.method = .GET
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(1)) else { return false }
        _ = try? await response.body.collect(upTo: 1 << 20)
        return true
    }

    private func logTail() -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return String(text.suffix(2_000))
    }

    /// Asks the kernel for an unused loopback port by binding port 0.
    public static func freeLoopbackPort() throws -> Int {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw StartError(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw StartError(description: "bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw StartError(description: "getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Runs `body` against a fresh moto server and always stops the server afterwards.
public func withMotoServer<T>(_ body: (MotoServer) async throws -> T) async throws -> T {
    try await withServer(try await MotoServer.start(), body)
}

/// One moto server shared by every test of this process, started on first use and
/// killed when the process exits; tests isolate themselves with fresh table names.
public actor SharedMotoServer {
    /// The process-wide instance.
    public static let shared = SharedMotoServer()

    private var server: Task<MotoServer, any Error>?

    /// Another shared server, for a group of tests that must not queue behind every other
    /// test's calls (moto answers one request at a time).
    public init() {}

    /// The running server, starting it on first use. A failure to start is thrown to
    /// every caller (never a skip), naming how to install moto.
    public func server() async throws -> MotoServer {
        if let server { return try await server.value }
        let task = Task { () async throws -> MotoServer in
            let started = try await MotoServer.start()
            MotoServer.killAtExit(started)
            return started
        }
        server = task
        return try await task.value
    }
}

/// Servers to kill when the process exits; `atexit` takes a plain C function, so the
/// list is global. They are sent SIGKILL and not awaited: the process is ending.
private let motoServersToKill = Mutex<[MotoServer]>([])

extension MotoServer {
    /// Kills `server` when this process exits normally.
    static func killAtExit(_ server: MotoServer) {
        let first = motoServersToKill.withLock { servers in
            servers.append(server)
            return servers.count == 1
        }
        if first {
            atexit {
                for server in motoServersToKill.withLock({ $0 }) {
                    server.process.signal(SIGKILL)
                    try? FileManager.default.removeItem(atPath: server.logPath)
                }
            }
        }
    }
}
