import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Bad input gets one clear line naming the problem, a documented exit code, and
/// changes nothing.
@Suite("CLI: bad input")
struct BadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let arguments: [String]
        let status: Int32
        let mentions: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(arguments: ["create", "bad name"], status: 2, mentions: "config name"),
        Case(arguments: ["create", String(repeating: "x", count: 201)], status: 2, mentions: "longer than 200"),
        Case(arguments: ["set", "a//b", "v"], status: 2, mentions: "empty segment"),
        Case(arguments: ["set", "a/../b", "v"], status: 2, mentions: "\"..\" segment"),
        Case(arguments: ["set", "dir/", "v"], status: 2, mentions: "ends with '/'"),
        Case(arguments: ["set", "/", "v"], status: 2, mentions: "not a key"),
        Case(arguments: ["set", "k", "v", "--ttl", "soon"], status: 2, mentions: "ttl"),
        Case(arguments: ["set", "k", "v", "--ttl", "0"], status: 2, mentions: "ttl"),
        Case(arguments: ["set", "k", "v", "--content-type", "not a type"], status: 2, mentions: "content type"),
        Case(arguments: ["set", "k", "v", "--if-absent", "--if-exists"], status: 2, mentions: "contradict"),
        Case(arguments: ["set", "k", "v", "--if-absent", "--if-version", "3"], status: 2, mentions: "contradict"),
        Case(arguments: ["set", "k", "-d", "/nonexistent/file"], status: 2, mentions: "no such file"),
        Case(arguments: ["set", "/k", "v", "-d", "/tmp"], status: 2, mentions: "both"),
        Case(arguments: ["set", "k", "-d", "/tmp"], status: 2, mentions: "directory"),
        Case(arguments: ["set", "k"], status: 2, mentions: "no value"),
        Case(arguments: ["set", "k", "v", "--if-version", "x"], status: 2, mentions: "if-version"),
        Case(arguments: ["get", "nope", "k"], status: 3, mentions: "does not exist"),
        Case(arguments: ["set", "nope", "k", "v"], status: 3, mentions: "does not exist"),
        Case(arguments: ["get", "k", "--store", "ftp://x"], status: 2, mentions: "unknown scheme"),
        Case(arguments: ["get", "k", "--store", "nonsense"], status: 2, mentions: "not a URL"),
        Case(arguments: ["get", "k", "--store", "sqlite://"], status: 2, mentions: "names no file"),
        Case(arguments: ["ls", "--page-size", "0"], status: 2, mentions: "--page-size must be a whole number from 1 to 1000"),
        Case(arguments: ["watch", "--from-revision", "0"], status: 2, mentions: "from-revision"),
        Case(arguments: ["delete", "--prefix", "/x/", "--if-version", "1"], status: 2, mentions: "conditions"),
        Case(arguments: ["import", "nofile.json"], status: 2, mentions: "no such file"),
        Case(arguments: ["import", "settings.txt"], status: 2, mentions: "--from"),
        Case(arguments: ["--no-such-flag"], status: 2, mentions: "no-such-flag"),
        Case(arguments: ["update", "--notify", "sqs"], status: 2, mentions: "notification target"),
        Case(arguments: ["update", "--notify", "https://"], status: 2, mentions: "webhook"),
        Case(arguments: ["update", "--notify", "eventbridge:bad bus"], status: 2, mentions: "bus"),
        Case(arguments: ["update", "--notify", "none", "--notify", "eventbridge"], status: 2, mentions: "none"),
        Case(arguments: ["update", "--notify", "eventbridge", "--webhook-secret", "s"], status: 2, mentions: "needs a webhook"),
        Case(arguments: ["update", "--notify", "https://h.example/x", "--webhook-secret-file", "/nonexistent"], status: 2, mentions: "webhook secret file"),
        Case(arguments: ["update", "--notify", "eventbridge", "--notify", "eventbridge"], status: 2, mentions: "twice"),
        Case(arguments: ["lambda"], status: 2, mentions: "AWS_LAMBDA_RUNTIME_API"),
        Case(arguments: ["set", "k", "-d", "/dev/zero"], status: 1, mentions: "larger than the limit of 262144 bytes"),
        Case(arguments: ["import", "--from", "yaml", "/dev/zero"], status: 1, mentions: "larger than the limit of 16777216 bytes"),
        Case(arguments: ["update", "--notify", "https://h.example/x", "--webhook-secret-file", "/dev/zero"], status: 1, mentions: "larger than"),
        Case(arguments: ["update", "--history", "99999999999999999999d"], status: 2, mentions: "history"),
        Case(arguments: ["update", "--notify", "http://hooks.example.com/x"], status: 2, mentions: "--allow-http-webhooks"),
        Case(arguments: ["update", "--notify", "https://169.254.169.254/latest/meta-data"], status: 2, mentions: "--allow-private-webhooks"),
        Case(arguments: ["update", "--notify", "https://127.0.0.1:8899/x"], status: 2, mentions: "not a public address"),
        Case(arguments: ["update", "--notify", "https://[::ffff:10.0.0.1]/x"], status: 2, mentions: "not a public address"),
        Case(arguments: ["update", "--notify", "https://metadata.google.internal/x"], status: 2, mentions: "not a public address"),
        Case(arguments: ["update", "--notify", "https://localhost/x", "--allow-http-webhooks"], status: 2, mentions: "not a public address"),
    ]

    @Test("one clear line, the right exit code, nothing changed", arguments: cases)
    func rejected(_ testCase: Case) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "cfg")
        try await cli.run("use", "cfg")
        try await cli.run("set", "k", "original")
        let result = try await cli.run(testCase.arguments)
        #expect(result.status == testCase.status, "stderr: \(result.stderr)")
        #expect(result.stderr.lowercased().contains(testCase.mentions.lowercased()), "stderr: \(result.stderr)")
        #expect(result.stderr.hasPrefix("discfg: "))
        #expect(!result.stderr.contains("Fatal error"))
        #expect(result.stdout.isEmpty)
        let after = try await cli.run("info", "-f", "json").envelope()
        #expect(after.revision == 1, "the failed command changed the config")
        #expect(try await cli.run("get", "k").stdout == "original\n")
    }

    @Test("a value over 256 KiB is refused with exit 1; exactly 256 KiB is accepted")
    func valueSize() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "cfg")
        let limit = try cli.write("limit.bin", Data(repeating: 0x61, count: 256 * 1024))
        let over = try cli.write("over.bin", Data(repeating: 0x61, count: 256 * 1024 + 1))
        let refused = try await cli.run("set", "cfg", "big", "-d", over)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("262145 bytes"))
        #expect(try await cli.run("get", "cfg", "big").status == 3)
        #expect(try await cli.run("set", "cfg", "big", "-d", limit).status == 0)
    }

    @Test("errors in -f json are an envelope with code, message and field; a failed condition carries the current item")
    func jsonErrors() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "cfg")
        try await cli.run("set", "cfg", "k", "v1")
        let failed = try await cli.run("set", "cfg", "k", "v2", "--if-version", "7", "-f", "json")
        #expect(failed.status == 4)
        let envelope = try failed.envelope()
        #expect(envelope.error?.code == .conditionFailed)
        #expect(envelope.item?.value == "v1")
        let missing = try await cli.run("get", "cfg", "nope", "-f", "json").envelope()
        #expect(missing.error?.code == .keyNotFound)
        #expect(missing.error?.field == "key")
    }

    @Test("a store file that is not a database is reported, not crashed on")
    func corruptStore() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let path = try cli.write("garbage.db", Data(repeating: 0x42, count: 4096))
        let result = try await cli.run("configs", "--store", "sqlite://\(path)")
        #expect(result.status == 1)
        #expect(result.stderr.contains("garbage.db"))
        #expect(result.stderr.contains("not a"))
    }
}
