import DiscfgCore
import DiscfgTestSupport
import Foundation

/// Runs the built `discfg` binary, as a person would from a shell, against one store.
struct DiscfgCommand: Sendable {
    typealias Result = ChildProcess.Output

    /// The `--store` URL every command gets.
    let store: String
    /// The process environment.
    var environment: [String: String]

    /// Runs `discfg arguments… --store STORE` to completion.
    @discardableResult
    func run(_ arguments: String..., stdin: Data? = nil) async throws -> Result {
        try await run(arguments, stdin: stdin)
    }

    /// Runs `discfg arguments… --store STORE`; the pipes are read and the exit awaited on
    /// Dispatch threads, so Swift's cooperative threads stay free.
    func run(_ arguments: [String], stdin: Data? = nil) async throws -> Result {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments + ["--store", store]
        process.environment = environment
        return try await ChildProcess.run(process, stdin: stdin)
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
