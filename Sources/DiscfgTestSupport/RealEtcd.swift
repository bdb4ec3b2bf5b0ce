import Foundation

/// One server speaking the etcd API — a real etcd or `discfg serve --etcd` — as `etcdctl`
/// reaches it, with the offset that turns discfg's revision numbers into its own.
public struct EtcdEndpoint: Sendable {
    /// What the server is called in messages: `etcd` or `discfg`.
    public let name: String
    /// Where it listens on 127.0.0.1.
    public let port: Int
    /// etcdctl's HOME.
    public let home: String
    /// What this server's revisions add to discfg's.
    public var offset = 0

    public init(name: String, port: Int, home: String) {
        self.name = name
        self.port = port
        self.home = home
    }

    /// `text` with each `{rev:N}` written as this server's number for discfg's revision N.
    public func translate(_ text: String) -> String {
        var text = text
        while let range = text.range(of: #"\{rev:-?[0-9]+\}"#, options: .regularExpression) {
            let number = Int(text[range].dropFirst(5).dropLast()) ?? 0
            text.replaceSubrange(range, with: String(number + offset))
        }
        return text
    }

    /// etcdctl's environment: v3 API, this endpoint's HOME.
    public var environment: [String: String] { ChildProcess.environment(["ETCDCTL_API": "3", "HOME": home]) }

    /// etcdctl's flags for this endpoint, then `arguments` translated.
    public func arguments(_ arguments: [String]) -> [String] {
        ["--endpoints=127.0.0.1:\(port)", "--command-timeout=60s", "--dial-timeout=20s"] + arguments.map(translate)
    }

    /// Runs `etcdctl arguments…` to completion.
    public func etcdctl(_ arguments: [String], stdin: String? = nil) async throws -> ChildProcess.Output {
        try await ChildProcess.run(
            "etcdctl", self.arguments(arguments), environment: environment,
            stdin: stdin.map { .bytes(Data(translate($0).utf8)) } ?? .none, timeout: .seconds(120)
        )
    }

    /// Starts `etcdctl arguments…` (a watch) and returns it running.
    public func launch(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess.launch("etcdctl", self.arguments(arguments), environment: environment)
    }
}

/// A real etcd (Debian's `etcd-server`, installed by `scripts/setup`) on free loopback
/// ports with a scratch data directory, to compare discfg with. A machine without etcd
/// fails the tests that use it, it does not skip them.
public struct RealEtcd: TestServer {
    /// A failure to start, with what etcd printed.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The etcd process.
    public let process: ChildProcess
    /// Its data directory and HOME.
    public let directory: URL
    /// etcdctl's way to it.
    public let endpoint: EtcdEndpoint

    /// Starts `etcd` on free loopback ports and waits until `etcdctl endpoint health`
    /// answers; tries new ports when another process took them first.
    /// - Throws: ``StartFailure`` when etcd is not installed or never became healthy.
    public static func start() async throws -> RealEtcd {
        guard let etcd = executable("etcd") else {
            throw StartFailure(description: """
                etcd is not installed: these tests compare discfg with a real etcd. \
                Install Debian's etcd-server (scripts/setup does).
                """)
        }
        var failures: [String] = []
        for _ in 0..<3 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-etcd-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let client = try MotoServer.freeLoopbackPort()
            var peer = try MotoServer.freeLoopbackPort()
            while peer == client { peer = try MotoServer.freeLoopbackPort() }
            let clientURL = "http://127.0.0.1:\(client)", peerURL = "http://127.0.0.1:\(peer)"
            var settings = ["HOME": directory.path]
            #if arch(arm64)
            settings["ETCD_UNSUPPORTED_ARCH"] = "arm64"
            #endif
            let process = try ChildProcess.launch(
                etcd,
                [
                    "--name", "t", "--data-dir", directory.appendingPathComponent("data").path,
                    "--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
                    "--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
                    "--initial-cluster", "t=\(peerURL)",
                ],
                environment: ChildProcess.environment(settings), directory: directory.path, stdout: .discard
            )
            let endpoint = EtcdEndpoint(name: "etcd", port: client, home: directory.path)
            let healthy = try? await eventually("etcd on \(clientURL) is healthy", timeout: .seconds(120), interval: .milliseconds(250)) {
                guard process.isRunning else { throw StartFailure(description: "etcd on \(clientURL) ended") }
                return (try? await endpoint.etcdctl(["endpoint", "health"]))?.termination == .exited(0)
            }
            if healthy != nil { return RealEtcd(process: process, directory: directory, endpoint: endpoint) }
            await process.stop()
            failures.append("etcd on \(clientURL) (\(process.output.termination?.description ?? "still running")):\n\(process.output.stderr.suffix(3_000))")
            try? FileManager.default.removeItem(at: directory)
        }
        throw StartFailure(description: "etcd did not become healthy:\n" + failures.joined(separator: "\n\n"))
    }

    /// SIGTERM, SIGKILL after five seconds, then its directory removed.
    public func stop() async {
        await process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The program `name` in PATH.
    public static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
