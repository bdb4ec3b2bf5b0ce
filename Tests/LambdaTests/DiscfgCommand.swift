import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation

/// Runs the built `discfg` binary, as a person would from a shell, against one store.
struct DiscfgCommand: Sendable {
    typealias Result = ChildProcess.Output

    /// The `--store` URL every command gets.
    let store: String
    /// The child's whole environment.
    var environment: [String: String]

    /// Runs `discfg arguments… --store STORE` to completion.
    @discardableResult
    func run(_ arguments: String..., stdin: Data? = nil) async throws -> Result {
        try await run(arguments, stdin: stdin)
    }

    /// Runs `discfg arguments… --store STORE` to completion, feeding it `stdin` (or `/dev/null`).
    func run(_ arguments: [String], stdin: Data? = nil) async throws -> Result {
        try await ChildProcess.run(
            Self.executable.path, arguments + ["--store", store], environment: environment, stdin: stdin.map { .bytes($0) } ?? .none
        )
    }

    /// Runs a command that must succeed and returns its `-f json` envelope.
    func json(_ arguments: String...) async throws -> Envelope {
        let result = try await run(arguments + ["-f", "json"])
        guard result.status == 0 else {
            throw LambdaTestFailure("discfg \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return try result.envelope()
    }

    /// The built binary.
    static var executable: URL { ChildProcess.discfg }
}

/// A test's own failure, with a message that says what was seen.
struct LambdaTestFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
