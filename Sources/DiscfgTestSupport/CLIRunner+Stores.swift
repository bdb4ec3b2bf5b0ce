import Foundation

/// Where a CLI test's commands go: a SQLite file, a DynamoDB table on moto, or a running
/// `discfg serve` over a SQLite file (the remote store). A test that holds for every store
/// the CLI opens takes these as its arguments and runs through ``CLIRunner/on(_:_:)``.
public enum CLIStoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite = "SQLite"
    case dynamoDB = "DynamoDB (moto)"
    case server = "discfg serve (http store)"

    public var description: String { rawValue }
}

extension CLIRunner {
    /// A store could not be made ready for a test: what `init` said.
    public struct StoreSetupFailed: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `body` with a runner whose commands reach a fresh store of `kind` (DynamoDB's
    /// table and the served file made with `init` first), and cleans up after it.
    public static func on(_ kind: CLIStoreKind, _ body: (CLIRunner) async throws -> Void) async throws {
        switch kind {
        case .sqlite:
            let cli = try CLIRunner()
            defer { cli.cleanUp() }
            try await body(cli)
        case .dynamoDB:
            var (cli, store) = try await onDynamoDB()
            defer { cli.cleanUp() }
            try await cli.initialize(["--store", store])
            cli.environment["DISCFG_STORE"] = store
            try await body(cli)
        case .server:
            let cli = try CLIRunner()
            defer { cli.cleanUp() }
            try await cli.initialize([])
            let (server, port) = try await cli.serve()
            try await withServer(server) { _ in
                var remote = cli
                remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
                try await body(remote)
            }
        }
    }

    /// `discfg init` with `arguments`, which must succeed.
    private func initialize(_ arguments: [String]) async throws {
        let result = try await run(["init"] + arguments + ["-f", "silent"])
        guard result.status == 0 else { throw StoreSetupFailed(description: "discfg init failed (exit \(result.status)): \(result.stderr)") }
    }
}
