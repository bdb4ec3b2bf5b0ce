import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The CLI prints, for the recorded set of commands, byte for byte what was recorded
/// (`Tests/Recorded/cli.txt`): stdout, stderr and exit status, with times and the
/// scratch directory written as placeholders (the binary reads the real clock), and so
/// are a token and its id, which are random (`<token-id>` in a command is the id of the
/// token created last).
@Suite("Recorded outputs: CLI")
struct RecordedCLITests {
    static let commands: [[String]] = [
        ["configs"],
        ["create", "app"],
        ["create", "app"],
        ["use", "app"],
        ["which"],
        ["set", "db/host", "db1.internal"],
        ["set", "app", "db/port", "5432"],
        ["set", "feature", #"{"json":"works"}"#],
        ["set", "db/host", "db2.internal", "--if-version", "1"],
        ["set", "db/host", "db3.internal", "--if-version", "1"],
        ["get", "db/host"],
        ["get", "db/host", "-f", "json"],
        ["get", "feature", "-f", "json"],
        ["get", "db/port", "-f", "silent"],
        ["ls"],
        ["ls", "/db/", "-f", "json"],
        ["history", "db/host"],
        ["history", "db/host", "-f", "json"],
        ["export", "--to", "env"],
        ["export", "--to", "json"],
        ["export", "--to", "yaml"],
        ["delete", "db/port"],
        ["delete", "db/port"],
        ["info", "-f", "json"],
        ["configs", "-f", "json"],
        // Tokens and keys: each value under a field named for it.
        ["token", "create", "--role", "read", "--scope", "app", "--description", "web tier", "-f", "json"],
        ["token", "list", "-f", "json"],
        ["token", "revoke", "<token-id>", "-f", "json"],
        ["key", "init", "-f", "json"],
        // Mistakes.
        ["get", "nothere"],
        ["get", "a\u{1}b"],
        ["ls", "--page-size", "-1"],
        ["ls", "--page-size=-1"],
        ["ls", "--page-size", "18446744073709551616"],
        ["create", "Bad!Name"],
        ["set", "db/host"],
        ["frobnicate"],
        ["delete-config", "app", "--yes"],
        ["get", "db/host"],
    ]

    @Test("the CLI prints the recorded outputs")
    func cli() async throws {
        let runner = try CLIRunner()
        defer { runner.cleanUp() }
        var transcript = ""
        var tokenID = ""
        for arguments in Self.commands {
            let result = try await runner.run(arguments.map { $0.replacingOccurrences(of: "<token-id>", with: tokenID) })
            if let id = result.stdout.firstMatch(of: /"id" : "([0-9a-f]{12})"/)?.1 { tokenID = String(id) }
            transcript += "### discfg \(arguments.map(Self.quoted).joined(separator: " "))\n"
            transcript += "exit \(result.status)\n"
            if !result.stdout.isEmpty { transcript += Self.normalized(result.stdout, runner).split(separator: "\n", omittingEmptySubsequences: false).map { "1| " + $0 }.joined(separator: "\n") + "\n" }
            if !result.stderr.isEmpty { transcript += Self.normalized(result.stderr, runner).split(separator: "\n", omittingEmptySubsequences: false).map { "2| " + $0 }.joined(separator: "\n") + "\n" }
        }
        let difference = try Recording.compare(transcript, with: "cli.txt")
        #expect(difference == nil, "\(difference ?? "")")
    }

    static func quoted(_ argument: String) -> String {
        argument.allSatisfy { $0.isLetter || $0.isNumber || "/-._".contains($0) } ? argument : "'" + argument.debugDescription.dropFirst().dropLast() + "'"
    }

    /// Times, ages, the scratch directory, and the user and host a local change is
    /// recorded as, as placeholders; table columns separated by two spaces (an age's
    /// width moves the columns after it).
    static func normalized(_ text: String, _ runner: CLIRunner) -> String {
        text.replacingOccurrences(of: runner.directory.path, with: "<dir>")
            .replacingOccurrences(of: Principal.localUser(environment: runner.environment).id, with: "<user>@<host>")
            .replacingOccurrences(of: #"dcfg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}"#, with: "<token>", options: .regularExpression)
            .replacingOccurrences(of: #""id" : "[0-9a-f]{12}""#, with: #""id" : "<token-id>""#, options: .regularExpression)
            .replacingOccurrences(of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)"#, with: "<time>", options: .regularExpression)
            .replacingOccurrences(of: #"\b\d{13}\b"#, with: "<ms>", options: .regularExpression)
            .replacingOccurrences(of: #"(just now|\d+ ?[a-z]+ ago|in \d+ ?[a-z]+)"#, with: "<age>", options: .regularExpression)
            .replacingOccurrences(of: #"  +"#, with: "  ", options: .regularExpression)
    }
}
