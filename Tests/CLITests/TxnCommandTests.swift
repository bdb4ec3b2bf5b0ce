import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg txn`: JSON from a file or standard input, the line syntax of `-i`, both
/// branches and their exit statuses, and bad input refused with nothing changed.
@Suite("CLI: txn")
struct TxnCommandTests {
    static let lock = #"""
    {"compare": [{"key": "/lock", "target": "version", "result": "=", "value": 0}],
     "success": [{"op": "put", "key": "/lock", "value": "me", "ttl": 30}, {"op": "put", "key": "/owner", "value": "me"}],
     "failure": [{"op": "get", "key": "/lock"}]}
    """#

    /// A runner with config `c` selected and `/owner` set, at revision 1.
    private func runner() async throws -> CLIRunner {
        let cli = try CLIRunner()
        try await cli.run("create", "c")
        try await cli.run("use", "c")
        try await cli.run("set", "/owner", "nobody")
        return cli
    }

    @Test("--file: SUCCESS (exit 0) takes the lock; the same again is FAILURE (exit 4) and runs the failure branch")
    func fileInput() async throws {
        let cli = try await runner()
        defer { cli.cleanUp() }
        let file = try cli.write("lock.json", Data(Self.lock.utf8))

        let won = try await cli.run("txn", "--file", file)
        #expect(won.status == 0, "\(won.stderr)")
        #expect(won.stdout == "SUCCESS\nput /lock  version 1  revision 2\nput /owner  version 2  revision 2\n")
        #expect(won.stderr.isEmpty)

        let lost = try await cli.run("txn", "c", "--file", file)
        #expect(lost.status == 4)
        #expect(lost.stdout == "FAILURE\nget /lock = me\n")
        #expect(try await cli.run("get", "/owner").stdout == "me\n")
        #expect(try await cli.run("info", "-f", "json").envelope().revision == 2)
    }

    @Test("standard input, piped or as --file -; -f json prints the envelope; -f silent prints nothing")
    func standardInputAndFormats() async throws {
        let cli = try await runner()
        defer { cli.cleanUp() }
        let json = try await cli.run(["txn", "-f", "json"], stdin: Data(Self.lock.utf8))
        #expect(json.status == 0, "\(json.stderr)")
        let envelope = try json.envelope()
        #expect(envelope.action == "txn")
        #expect(envelope.config == "c")
        #expect(envelope.succeeded == true)
        #expect(envelope.revision == Revision(2))
        #expect(envelope.at != nil)
        #expect(envelope.responses?.map(\.op) == ["put", "put"])
        #expect(envelope.responses?[1].prevItem?.value == "nobody")
        #expect(json.stdout.hasPrefix("{\n  \"action\" : \"txn\",\n"))

        let failed = try await cli.run(["txn", "--file", "-", "-f", "json"], stdin: Data(Self.lock.utf8))
        #expect(failed.status == 4)
        #expect(try failed.envelope().succeeded == false)
        #expect(try failed.envelope().responses?.first?.items?.first?.value == "me")

        let silent = try await cli.run(["txn", "-f", "silent"], stdin: Data(#"{"success": [{"op": "delete", "prefix": "/"}]}"#.utf8))
        #expect(silent.status == 0)
        #expect(silent.stdout.isEmpty)
        #expect(silent.stderr.isEmpty)
        #expect(try await cli.run("ls", "-r", "-f", "json").envelope().items == [])
    }

    @Test("-i reads compares, success and failure requests line by line, with prompts on standard error")
    func interactive() async throws {
        let cli = try await runner()
        defer { cli.cleanUp() }
        try await cli.run("set", "/tmp/a", "1")
        try await cli.run("set", "/tmp/b", "2")
        let lines = """
        version("/lock") = "0"
        value("/owner") = "nobody"
        mod("/owner") < "100"
        create("/owner") = "1"
        exists("/tmp/") = "true"
        version('/jobs/') = 0

        put /lock me --ttl 30s
        put /owner "two words" --content-type text/plain
        del /tmp/
        del /absent
        get /owner
        get /nothing/

        get /lock

        """
        let won = try await cli.run(["txn", "-i"], stdin: Data(lines.utf8))
        #expect(won.status == 0, "\(won.stderr)")
        #expect(won.stderr == "compares:\nsuccess requests (get, put, del):\nfailure requests (get, put, del):\n")
        #expect(won.stdout == """
        SUCCESS
        put /lock  version 1  revision 4
        put /owner  version 2  revision 4
        delete /tmp/a
        delete /tmp/b
        delete /absent  (nothing to delete)
        get /owner = two words
        get /nothing/  (not found)

        """)
        let owner = try await cli.run("get", "/owner", "-f", "json").envelope().item
        #expect(owner?.contentType == "text/plain")
        #expect(try await cli.run("get", "/lock", "-f", "json").envelope().item?.expiresAt != nil)

        // The end of input ends the sections too.
        let lost = try await cli.run(["txn", "-i"], stdin: Data("version(\"/lock\") = \"0\"\n\nput /x 1\n\nget /lock".utf8))
        #expect(lost.status == 4)
        #expect(lost.stdout == "FAILURE\nget /lock = me\n")
        #expect(try await cli.run("get", "/x").status == 3)
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var stdin: String
        var message: String
        var testDescription: String { "\(arguments.joined(separator: " ")) <<< \(stdin.prefix(60))" }
    }

    static let badInputs: [BadInput] = [
        BadInput(arguments: ["txn"], stdin: "{not json", message: "standard input: transaction is not valid"),
        BadInput(arguments: ["txn"], stdin: #"{"compares": []}"#, message: "unknown field \"compares\""),
        BadInput(arguments: ["txn"], stdin: #"{"success": [{"op": "put", "key": "/a", "value": "1"}, {"op": "delete", "key": "/a"}]}"#, message: "key /a is written more than once"),
        BadInput(arguments: ["txn"], stdin: #"{"success": [{"op": "put", "key": "/a", "value": "1", "ttl": 0}]}"#, message: "success[0]: ttl must be between"),
        BadInput(arguments: ["txn", "-i"], stdin: "\nput /a 1\nput /a 2\n\n", message: "key /a is written more than once"),
        BadInput(arguments: ["txn", "-i"], stdin: "size(\"/a\") = \"1\"\n", message: "compares, line 1: unknown target"),
        BadInput(arguments: ["txn", "-i"], stdin: "version(\"/a\") = \"x\"\n", message: "version must be a whole number"),
        BadInput(arguments: ["txn", "-i"], stdin: "exists(\"/a\") < \"true\"\n", message: "an exists comparison takes = or !="),
        BadInput(arguments: ["txn", "-i"], stdin: "value(\"/a\") = \"open\n", message: "not closed"),
        BadInput(arguments: ["txn", "-i"], stdin: "\nput /a\n", message: "success requests, line 1: a put is put KEY VALUE"),
        BadInput(arguments: ["txn", "-i"], stdin: "\nput /a 1 --ttl forever\n", message: "ttl \"forever\""),
        BadInput(arguments: ["txn", "-i"], stdin: "\nput /a 1 --content-type application/vnd.discfg.secret\n", message: "cannot seal"),
        BadInput(arguments: ["txn", "-i"], stdin: "\n\ncopy /a /b\n", message: "failure requests, line 1"),
        BadInput(arguments: ["txn", "-i"], stdin: "\nget a//b\n", message: "empty segment"),
        BadInput(arguments: ["txn", "-i", "--file", "x.json"], stdin: "", message: "not both"),
        BadInput(arguments: ["txn", "--file", "missing.json"], stdin: "", message: "no such file"),
        BadInput(arguments: ["txn"], stdin: "", message: "no transaction given"),
    ]

    @Test("bad input: exit 2, one message, nothing changed", arguments: badInputs)
    func badInput(_ bad: BadInput) async throws {
        let cli = try await runner()
        defer { cli.cleanUp() }
        let result = try await cli.run(bad.arguments, stdin: bad.stdin.isEmpty ? nil : Data(bad.stdin.utf8))
        #expect(result.status == 2, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains(bad.message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try await cli.run("info", "-f", "json").envelope().revision == 1)
    }

    @Test("a missing config is exit 3; a JSON error envelope with -f json")
    func missingConfig() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "other")
        let result = try await cli.run(["txn", "nope", "-f", "json"], stdin: Data("{}".utf8))
        #expect(result.status == 3)
        #expect(try result.envelope().error?.code == .configNotFound)
        #expect(try result.envelope().action == "txn")
    }

    @Test("--help teaches the lock, the move, -i and the exit statuses")
    func help() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let help = try await cli.run("txn", "--help").stdout
        for text in ["--file", "--interactive", "lock.json", "exists(\"/db/primary\") = \"false\"", "compares:", "del /tmp/", "4  a comparison failed", "encryption"] {
            #expect(help.contains(text), "\(text)")
        }
    }
}
