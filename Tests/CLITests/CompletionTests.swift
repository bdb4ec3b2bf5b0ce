import DiscfgTestSupport
import Foundation
import Glibc
import Testing

/// Shell completion reads configs, keys and token ids from the store the command line
/// selects, through the hidden `---completion` entry point the generated scripts call:
/// `discfg ---completion SUBCOMMAND… -- ARGUMENT WORD-INDEX CURSOR WORDS…`.
@Suite("Shell completion from the store")
struct CompletionTests {
    /// A store with config myapp holding /db/host, /db/port, /db/replica/a and /web/x.
    static func storeWithKeys() async throws -> CLIRunner {
        let cli = try CLIRunner()
        try await cli.run("create", "myapp")
        for (key, value) in [("/db/host", "h1"), ("/db/port", "5432"), ("/db/replica/a", "r"), ("/web/x", "y")] {
            let set = try await cli.run("set", "myapp", key, value)
            try #require(set.status == 0, "\(set.stderr)")
        }
        return cli
    }

    /// Asks for the completions of the last of `words` (the program first), as the
    /// shells do with the cursor at the end of the word.
    static func complete(_ cli: CLIRunner, _ subcommands: [String], _ argument: String, _ words: [String]) async throws -> CLIRunner.Result {
        let index = words.count - 1
        return try await cli.run(["---completion"] + subcommands + ["--", argument, String(index), String(words[index].count)] + words)
    }

    @Test("keys complete under the typed prefix, as typed (with or without the leading slash)")
    func keys() async throws {
        let cli = try await Self.storeWithKeys()
        defer { cli.cleanUp() }
        let full = try await Self.complete(cli, ["get"], "positional@0", ["discfg", "get", "myapp", "/db/ho"])
        #expect(full.status == 0 && full.stderr.isEmpty, "\(full.stderr)")
        #expect(full.stdoutLines == ["/db/host"])
        let directory = try await Self.complete(cli, ["get"], "positional@0", ["discfg", "get", "myapp", "db/"])
        #expect(directory.stdoutLines == ["db/host", "db/port", "db/replica/"])
        // The config chosen with 'discfg use' (.discfg) is the one whose keys complete.
        try await cli.run("use", "myapp")
        let selected = try await Self.complete(cli, ["history"], "positional@0", ["discfg", "history", "/db/ho"])
        #expect(selected.stdoutLines == ["/db/host"])
        let first = try await Self.complete(cli, ["ls"], "positional@0", ["discfg", "ls", ""])
        #expect(first.stdoutLines == ["myapp", "db/", "web/"], "config names, then the selected config's top level")
    }

    @Test("configs complete for use and --config, token ids for token revoke, from the store --store names")
    func configsAndTokens() async throws {
        let cli = try await Self.storeWithKeys()
        defer { cli.cleanUp() }
        try await cli.run("create", "other")
        let use = try await Self.complete(cli, ["use"], "positional@0", ["discfg", "use", "my"])
        #expect(use.stdoutLines == ["myapp"])
        let option = try await Self.complete(cli, ["get"], "--config", ["discfg", "get", "--config", ""])
        #expect(option.stdoutLines == ["myapp", "other"])
        // --store on the line wins over DISCFG_STORE, as it does for the command.
        var elsewhere = cli
        elsewhere.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/absent.db"
        let named = try await Self.complete(elsewhere, ["use"], "positional@0", ["discfg", "use", "--store", "sqlite://\(cli.directory.path)/store.db", ""])
        #expect(named.stdoutLines == ["myapp", "other"])
        let created = try await cli.run("token", "create", "--role", "read")
        let id = try #require(created.stdout.firstMatch(of: /token ([0-9a-zA-Z_-]+), role/)).1
        let tokens = try await Self.complete(cli, ["token", "revoke"], "positional@0", ["discfg", "token", "revoke", ""])
        #expect(tokens.stdoutLines == [String(id)])
    }

    @Test("a dead or silent server answers nothing, within completion's own deadline rather than a connect timeout, with nothing on standard error", arguments: [Endpoint.closedPort, .neverAnswers])
    func deadEndpoint(_ endpoint: Endpoint) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let listener = try SilentListener()
        defer { listener.close() }
        let port = endpoint == .closedPort ? try SilentListener.closedPort() : listener.port
        for (subcommands, argument, words) in [
            (["get"], "positional@0", ["discfg", "get", "--store", "http://127.0.0.1:\(port)", "myapp", "/db/"]),
            (["use"], "positional@0", ["discfg", "use", "--store", "http://127.0.0.1:\(port)", ""]),
            (["token", "revoke"], "positional@0", ["discfg", "token", "revoke", "--store", "http://127.0.0.1:\(port)", "--token", "t", ""]),
            (["get"], "positional@0", ["discfg", "get", "--store", "dynamodb://us-east-1/t?endpoint=http://127.0.0.1:\(port)", "-k", "id", "-s", "secret", "myapp", "/"]),
        ] {
            let started = ContinuousClock.now
            let result = try await Self.complete(cli, subcommands, argument, words)
            let took = ContinuousClock.now - started
            // Completion gives up after its own 900 ms; the bound tells that apart from waiting
            // for a connect timeout (10 s) or a request's deadline (30 s), with room for a
            // debug binary starting on a loaded machine. It is a hang guard, not a speed figure.
            #expect(took < .seconds(5), "\(words.joined(separator: " ")) took \(took)")
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(words.joined(separator: " ")): \(result.stdout) \(result.stderr)")
        }
    }

    enum Endpoint: String, CustomTestStringConvertible {
        case closedPort, neverAnswers
        var testDescription: String { rawValue }
    }

    @Test("completion never creates a store: a SQLite store that does not exist stays absent, an empty file stays empty, a SQLite file discfg did not set up is left as it was")
    func createsNothing() async throws {
        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        let missing = cli.directory.appendingPathComponent("sub/store.db")
        cli.environment["DISCFG_STORE"] = "sqlite://\(missing.path)"
        for (subcommands, words) in [(["use"], ["discfg", "use", ""]), (["get"], ["discfg", "get", "myapp", "/"]), (["token", "revoke"], ["discfg", "token", "revoke", ""])] {
            let result = try await Self.complete(cli, subcommands, "positional@0", words)
            #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: missing.deletingLastPathComponent().path))
        let empty = cli.directory.appendingPathComponent("empty.db")
        try Data().write(to: empty)
        cli.environment["DISCFG_STORE"] = "sqlite://\(empty.path)"
        let result = try await Self.complete(cli, ["use"], "positional@0", ["discfg", "use", ""])
        #expect(result.stdout.isEmpty)
        #expect(try FileManager.default.attributesOfItem(atPath: empty.path)[.size] as? Int == 0)
        #expect(!FileManager.default.fileExists(atPath: empty.path + "-wal"))
        // A SQLite file discfg has not set up (or an older discfg set up) would be set
        // up or upgraded by opening it: completion leaves it as it is and offers nothing.
        let other = cli.directory.appendingPathComponent("other.db")
        let schema = "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); sys.argv[2:] and db.execute('CREATE TABLE notes (text)'); print([row[0] for row in db.execute('SELECT name FROM sqlite_master')], db.execute('PRAGMA user_version').fetchall())"
        let python = ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment)
        try #require(try await ChildProcess.run("python3", ["-c", schema, other.path, "create"], environment: python).status == 0)
        cli.environment["DISCFG_STORE"] = "sqlite://\(other.path)"
        let otherResult = try await Self.complete(cli, ["use"], "positional@0", ["discfg", "use", ""])
        #expect(otherResult.status == 0 && otherResult.stdout.isEmpty && otherResult.stderr.isEmpty, "\(otherResult.stderr)")
        let after = try await ChildProcess.run("python3", ["-c", schema, other.path], environment: python)
        #expect(after.stdout == "['notes'] [(0,)]\n", "the file was set up as a store: \(after.stdout)")
    }

    @Test("bash: the generated script's completion function offers /db/host for 'discfg get myapp /db/ho'")
    func bashScript() async throws {
        let cli = try await Self.storeWithKeys()
        defer { cli.cleanUp() }
        let script = try await cli.run("--generate-completion-script", "bash")
        try #require(script.status == 0, "\(script.stderr)")
        let path = try cli.write("discfg.bash", script.stdoutData)
        // What bash sets before calling a `complete -F` function, with the cursor at the
        // end of the line; the first word is the binary, which the script runs.
        let shell = try cli.launchShell("""
            source \(path)
            complete -p discfg >/dev/null || exit 9
            complete_line() {
                COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
                read -r -a COMP_WORDS <<< "$1"
                [[ "$1" == *" " ]] && COMP_WORDS+=("")
                COMP_WORDS[0]="$DISCFG"
                COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
                COMPREPLY=()
                _discfg discfg "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\\n' "${COMPREPLY[@]}"
            }
            complete_line "discfg get myapp /db/ho"
            echo --
            complete_line "discfg use m"
            """)
        let result = try await shell.wait(timeout: .seconds(30))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "/db/host\n--\nmyapp\n", "\(result.stderr)")
    }
}

/// A loopback TCP socket that listens and never accepts: connections complete in the
/// kernel and then hear nothing, like a server that hangs.
struct SilentListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 16) == 0 else {
            Glibc.close(socket)
            throw POSIXError(.EADDRINUSE)
        }
        descriptor = socket
        port = Self.port(of: socket)
    }

    func close() { Glibc.close(descriptor) }

    /// A loopback port nobody listens on: bound for a moment, then closed.
    static func closedPort() throws -> Int {
        let listener = try SilentListener()
        listener.close()
        return listener.port
    }

    private static func port(of descriptor: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
