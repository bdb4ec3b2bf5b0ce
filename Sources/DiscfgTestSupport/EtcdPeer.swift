import Foundation

extension SharedMotoServer {
    /// The etcd suites' moto, apart from the one the other suites share: each etcdctl call
    /// has a deadline, and behind every other suite's calls on one moto answering in turn,
    /// a read at a past revision waited past 20 s in a parallel run.
    public static let etcd = SharedMotoServer()
}

/// A running `discfg serve --etcd` and Debian's `etcdctl` (v3 API) pointed at it, on the
/// embedded store or on DynamoDB (moto). A machine without etcdctl fails the tests that
/// use it (`scripts/setup` installs it), it does not skip them.
///
/// ```swift
/// let etcd = try await EtcdPeer.start(.sqlite)
/// try await withServer(etcd) { etcd in
///     let put = try await etcd.etcdctl("put", "a", "1")
///     #expect(put.stdout == "OK\n")
/// }
/// ```
public struct EtcdPeer: TestServer {
    /// The store behind `serve --etcd`.
    public enum Backing: String, CaseIterable, CustomStringConvertible, Sendable {
        case sqlite, dynamodb
        public var description: String { rawValue }
    }

    /// A command (etcdctl's, or discfg's setting the peer up) that did not succeed, with
    /// what it printed.
    public struct CommandFailed: Error, CustomStringConvertible {
        /// The program and its arguments.
        public let command: [String]
        public let output: ChildProcess.Output
        public var description: String { "\(command.joined(separator: " ")): \(output.termination?.description ?? "running"): \(output.stderr)" }
    }

    /// The runner whose store the server serves; etcdctl's HOME is its directory.
    public let cli: CLIRunner
    /// `discfg serve --etcd`.
    public let server: ChildProcess
    /// Where the etcd API listens on 127.0.0.1.
    public let etcdPort: Int
    /// The store URL the server serves.
    public let store: String

    /// A peer of a server already started on `cli`'s store (a second server on one store).
    public init(cli: CLIRunner, server: ChildProcess, etcdPort: Int, store: String) {
        self.cli = cli
        self.server = server
        self.etcdPort = etcdPort
        self.store = store
    }

    /// Starts `serve --etcd` on a fresh store of `backing` (for DynamoDB, a new table on
    /// ``SharedMotoServer/etcd``).
    /// - Parameter serveArguments: more flags for `serve`.
    public static func start(_ backing: Backing, _ serveArguments: [String] = []) async throws -> EtcdPeer {
        var cli = try CLIRunner()
        var store = "sqlite://\(cli.directory.path)/store.db"
        do {
            if backing == .dynamodb {
                let moto = try await SharedMotoServer.etcd.server()
                cli.environment["AWS_ACCESS_KEY_ID"] = "AKIDEXAMPLE"
                cli.environment["AWS_SECRET_ACCESS_KEY"] = "discfg-test"
                cli.environment["AWS_EC2_METADATA_DISABLED"] = "true"
                store = "dynamodb://us-east-1/etcd-\(UUID().uuidString.prefix(12))?endpoint=\(moto.endpoint.absoluteString)"
                let created = try await cli.run("init", "--store", store)
                guard created.status == 0 else { throw CommandFailed(command: ["discfg", "init", "--store", store], output: created) }
            }
            cli.environment["DISCFG_STORE"] = store
            let (server, port) = try await cli.serveEtcd(serveArguments)
            return EtcdPeer(cli: cli, server: server, etcdPort: port, store: store)
        } catch {
            cli.cleanUp()
            throw error
        }
    }

    /// A second `serve --etcd` on this peer's store, on a port of its own; stopping it
    /// leaves this one's directory to this one.
    public func secondServer(_ serveArguments: [String] = []) async throws -> EtcdPeer {
        let (server, port) = try await cli.serveEtcd(serveArguments)
        return EtcdPeer(cli: cli, server: server, etcdPort: port, store: store)
    }

    /// Runs `etcdctl arguments…` and returns its output, whatever it was; `stdin` for `txn -i`.
    public func etcdctl(_ arguments: String..., stdin: String? = nil) async throws -> ChildProcess.Output {
        try await ChildProcess.run(
            "etcdctl", ["--endpoints=127.0.0.1:\(etcdPort)", "--command-timeout=60s"] + arguments,
            environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": cli.directory.path]),
            stdin: stdin.map { .bytes(Data($0.utf8)) } ?? .none, timeout: .seconds(120)
        )
    }

    /// etcdctl's standard output.
    /// - Throws: ``CommandFailed`` when etcdctl did not exit with 0.
    public func ok(_ arguments: String..., stdin: String? = nil) async throws -> String {
        let output = try await ChildProcess.run(
            "etcdctl", ["--endpoints=127.0.0.1:\(etcdPort)", "--command-timeout=60s"] + arguments,
            environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": cli.directory.path]),
            stdin: stdin.map { .bytes(Data($0.utf8)) } ?? .none, timeout: .seconds(120)
        )
        guard output.termination == .exited(0) else { throw CommandFailed(command: ["etcdctl"] + arguments, output: output) }
        return output.stdout
    }

    /// etcdctl's `-w json` output, decoded.
    /// - Throws: ``CommandFailed`` when etcdctl did not exit with 0.
    public func json(_ arguments: String...) async throws -> [String: Any] {
        let output = try await ChildProcess.run(
            "etcdctl", ["--endpoints=127.0.0.1:\(etcdPort)", "--command-timeout=60s", "-w", "json"] + arguments,
            environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": cli.directory.path]), timeout: .seconds(120)
        )
        guard output.termination == .exited(0) else { throw CommandFailed(command: ["etcdctl", "-w", "json"] + arguments, output: output) }
        return try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any] ?? [:]
    }

    /// Stops the server and removes its directory.
    public func stop() async {
        await server.stop()
        cli.cleanUp()
    }
}
