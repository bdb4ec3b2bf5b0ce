import AsyncHTTPClient
import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOCore
import Testing

/// etcdctl authenticating to `serve --etcd` with discfg tokens: the token's id as user
/// name, the token as password; each call allowed by the token's role and scopes; a
/// revoked token's calls and open watch end; a scoped token's leases are its own.
@Suite("etcd API: etcdctl authenticates with discfg tokens")
struct EtcdAuthTests {
    /// A token made with `discfg token create`.
    struct Token {
        let text: String
        var id: String { String(text.dropFirst(5).prefix(12)) }
        /// etcdctl's flags for it: `--user ID --password TOKEN`.
        var flags: [String] { ["--user", id, "--password", text] }
    }

    static func token(_ etcd: EtcdPeer, _ arguments: String...) async throws -> Token {
        let created = try await etcd.cli.run(["token", "create"] + arguments)
        #expect(created.status == 0, "\(created.stderr)")
        return Token(text: String(created.stdout.split(separator: "\n").first ?? ""))
    }

    /// Runs etcdctl with `arguments` after the endpoint.
    static func etcdctl(_ etcd: EtcdPeer, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> ChildProcess.Output {
        try await ChildProcess.run(
            "etcdctl", ["--endpoints=127.0.0.1:\(etcd.etcdPort)", "--command-timeout=20s"] + arguments,
            environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": etcd.cli.directory.path]), timeout: timeout
        )
    }

    /// Waits until the server requires tokens and knows every token created so far: it
    /// reads them every 0.5 s, so a token is refused until the next reading (as the REST
    /// API's cache lets a token created elsewhere in within 2 s).
    static func waitUntilRequired(_ etcd: EtcdPeer) async throws {
        try await eventually("the etcd API requires tokens", interval: .milliseconds(250)) {
            try await etcdctl(etcd, ["get", "a"]).stderr.contains("etcdserver: user name is empty")
        }
        // Required at one reading; every token is known at the next (0.5 s later), which
        // the server does not announce.
        try await Task.sleep(for: .milliseconds(1200))
    }

    /// Expects etcdctl to fail with `message` and returns its output.
    @discardableResult
    static func refused(_ etcd: EtcdPeer, _ arguments: [String], _ message: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ChildProcess.Output {
        let output = try await etcdctl(etcd, arguments)
        #expect(output.termination != .exited(0), "etcdctl \(arguments.suffix(4).joined(separator: " ")) was served: \(output.stdout)", sourceLocation: sourceLocation)
        #expect(output.stderr.contains(message), "etcdctl \(arguments.suffix(4).joined(separator: " ")): \(output.stderr.suffix(600))", sourceLocation: sourceLocation)
        return output
    }

    static func served(_ etcd: EtcdPeer, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let output = try await etcdctl(etcd, arguments)
        #expect(output.termination == .exited(0), "etcdctl \(arguments.suffix(4).joined(separator: " ")): \(output.stderr.suffix(600))", sourceLocation: sourceLocation)
        return output.stdout
    }

    static let denied = "etcdserver: permission denied"

    @Test("--user ID --password TOKEN (and --user ID:TOKEN) gets and puts, recorded as the token; no credentials, a wrong password, a read token's put and user management are refused in etcd's words", .timeLimit(.minutes(4)))
    func roles() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let writer = try await Self.token(etcd, "--role", "write", "--description", "deploy bot")
            let reader = try await Self.token(etcd, "--role", "read")
            let elsewhere = try await Self.token(etcd, "--role", "admin", "--scope", "other")
            try await Self.waitUntilRequired(etcd)

            #expect(try await Self.served(etcd, writer.flags + ["put", "a", "1"]) == "OK\n")
            #expect(try await Self.served(etcd, ["--user", "\(writer.id):\(writer.text)", "get", "a"]) == "a\n1\n")
            #expect(try await Self.served(etcd, reader.flags + ["get", "a", "--print-value-only"]) == "1\n")
            try await Self.refused(etcd, ["put", "a", "2"], "etcdserver: user name is empty")
            try await Self.refused(etcd, ["endpoint", "status"], "etcdserver: user name is empty")
            // As etcd, the member list is answered without a token: clients ask it first.
            #expect(try await Self.served(etcd, ["member", "list"]).contains("discfg"))
            try await Self.refused(etcd, ["--user", reader.id, "--password", writer.text, "get", "a"], "etcdserver: authentication failed, invalid user ID or password")
            try await Self.refused(etcd, ["--user", reader.id, "--password", "dcfg_\(reader.id)_wrong", "get", "a"], "etcdserver: authentication failed, invalid user ID or password")
            try await Self.refused(etcd, reader.flags + ["put", "a", "2"], Self.denied)
            try await Self.refused(etcd, reader.flags + ["del", "a"], Self.denied)
            try await Self.refused(etcd, reader.flags + ["lease", "grant", "60"], Self.denied)
            try await Self.refused(etcd, writer.flags + ["compaction", "1"], Self.denied)
            try await Self.refused(etcd, elsewhere.flags + ["get", "a"], Self.denied)
            let userAdd = try await Self.refused(etcd, writer.flags + ["user", "add", "x", "--new-user-password", "y"], "code = Unimplemented")
            #expect(userAdd.stderr.contains("'discfg token'"), "\(userAdd.stderr.suffix(400))")
            try await Self.refused(etcd, writer.flags + ["role", "list"], "code = Unimplemented")
            // Read-only transactions need read; one that puts needs write.
            #expect(try await Self.served(etcd, reader.flags + ["txn"], stdin: "\nget a\n\n\n").contains("1"))

            #expect(try await etcd.cli.run("get", "etcd", "/a").stdout == "1\n", "nothing refused changed anything")
            let log = try await etcd.cli.run("log", "etcd", "-f", "json")
            #expect(log.stdout.contains(writer.id) && log.stdout.contains("deploy bot"), "\(log.stdout)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("revoking the token ends an open etcdctl watch and refuses later calls; another token's go on", .timeLimit(.minutes(4)))
    func revocation() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let reader = try await Self.token(etcd, "--role", "read")
            let writer = try await Self.token(etcd, "--role", "write")
            try await Self.waitUntilRequired(etcd)
            #expect(try await Self.served(etcd, writer.flags + ["put", "w", "before"]) == "OK\n")
            // From the first revision: the put is seen once the watch is open.
            let watch = try ChildProcess.launch(
                "etcdctl", ["--endpoints=127.0.0.1:\(etcd.etcdPort)"] + reader.flags + ["watch", "w", "--rev", "1"],
                environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": etcd.cli.directory.path])
            )
            _ = try await watch.waitForOutput(timeout: .seconds(30)) { $0.stdout.contains("before") ? true : nil }

            let revoked = try await etcd.cli.run("token", "revoke", reader.id)
            #expect(revoked.status == 0, "\(revoked.stderr)")
            let start = ContinuousClock.now
            let ended = try await watch.waitForOutput(timeout: .seconds(30)) { output -> String? in
                output.stderr.contains("watch was canceled") || output.stdout.contains("watch was canceled") ? output.stderr + output.stdout : nil
            }
            #expect(ended.contains("etcdserver: invalid auth token"), "\(ended)")
            #expect(ContinuousClock.now - start < .seconds(5), "the watch ended \(ContinuousClock.now - start) after the revocation")
            await watch.stop()

            try await Self.refused(etcd, reader.flags + ["get", "w"], "etcdserver: authentication failed, invalid user ID or password")
            #expect(try await Self.served(etcd, writer.flags + ["get", "w", "--print-value-only"]) == "before\n")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("an etcd-space scope allows ranges inside its prefix and refuses wider ones whole (Range, DeleteRange, Txn, Watch); a discfg-space scope reaches no etcd key", .timeLimit(.minutes(4)))
    func scopes() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let scoped = try await Self.token(etcd, "--role", "write", "--scope", "etcd:etcd:/registry/")
            let discfgSpace = try await Self.token(etcd, "--role", "write", "--scope", "etcd:/registry/")
            let admin = try await Self.token(etcd, "--role", "admin")
            try await Self.waitUntilRequired(etcd)
            #expect(try await Self.served(etcd, admin.flags + ["put", "/db/password", "hunter2"]) == "OK\n")

            #expect(try await Self.served(etcd, scoped.flags + ["put", "/registry/pods/a", "alpha"]) == "OK\n")
            #expect(try await Self.served(etcd, scoped.flags + ["get", "/registry/", "--prefix", "--print-value-only"]) == "alpha\n")
            #expect(try await Self.served(etcd, scoped.flags + ["get", "/registry/pods/", "--prefix", "--keys-only"]) == "/registry/pods/a\n\n")
            for wider in [["get", "", "--prefix"], ["get", "/", "--prefix"], ["get", "/registry", "--prefix"], ["get", "/registry/", "--from-key"],
                          ["get", "/db/password"], ["put", "/db/password", "x"], ["del", "/", "--prefix"], ["get", "/registry/a", "/s"]] {
                try await Self.refused(etcd, scoped.flags + wider, Self.denied)
            }
            // One key outside in a Txn: refused whole, nothing written.
            try await Self.refused(etcd, scoped.flags + ["txn"], Self.denied, stdin: "\nput /registry/pods/b beta\nput /db/password stolen\n\n\n")
            #expect(try await Self.served(etcd, admin.flags + ["get", "/registry/pods/b"]) == "")
            #expect(try await Self.served(etcd, admin.flags + ["get", "/db/password", "--print-value-only"]) == "hunter2\n")
            try await Self.nestedTxnThroughTheGateway(etcd, scoped)
            let watch = try await Self.etcdctl(etcd, scoped.flags + ["watch", "/", "--prefix"], timeout: .seconds(30))
            #expect((watch.stdout + watch.stderr).contains("watch was canceled (\(Self.denied))"), "\(watch.stdout) \(watch.stderr.suffix(400))")

            // `etcd:/registry/` is a discfg key prefix: it reaches /registry/… written by
            // REST, and no etcd key.
            try await Self.refused(etcd, discfgSpace.flags + ["get", "/registry/pods/a"], Self.denied)
            try await Self.refused(etcd, discfgSpace.flags + ["put", "/registry/pods/c", "x"], Self.denied)
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }
}

extension EtcdAuthTests {
    @Test("off loopback under TLS with tokens required: etcdctl authenticates with --cacert and a token; without one it is refused", .timeLimit(.minutes(3)))
    func offLoopbackOverTLS() async throws {
        let pki = try await TestCertificates.make()
        var cli = try CLIRunner()
        defer {
            pki.remove()
            cli.cleanUp()
        }
        cli.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/store.db"
        let created = try await cli.run("token", "create", "--role", "write", "--description", "remote deployer")
        #expect(created.status == 0, "\(created.stderr)")
        let token = Token(text: String(created.stdout.split(separator: "\n").first ?? ""))
        let server = try cli.launch(
            ["serve", "--port", "0", "--log-level", "error", "--auth", "token", "--etcd", "0.0.0.0:0", "--tls-cert", pki.path("server.pem"), "--tls-key", pki.path("server.key")],
            stdout: .discard
        )
        do {
            let port = try await server.waitForOutput(timeout: .seconds(60)) { output -> Int? in
                guard let range = output.stderr.range(of: #"etcd API over config etcd on 0\.0\.0\.0:(\d+)"#, options: .regularExpression) else { return nil }
                return Int(output.stderr[range].split(separator: ":").last ?? "")
            }
            let ca = ["--cacert", pki.path("ca.pem")]
            let put = try await ServeTLSTests.etcdctl(port, ca + token.flags + ["put", "/registry/a", "alpha"], home: cli.directory)
            #expect(put.stdout == "OK\n", "\(put.stderr.suffix(600))")
            let get = try await ServeTLSTests.etcdctl(port, ca + ["--user", "\(token.id):\(token.text)", "get", "/registry/a", "--print-value-only"], home: cli.directory)
            #expect(get.stdout == "alpha\n", "\(get.stderr.suffix(600))")
            let anonymous = try await ServeTLSTests.etcdctl(port, ca + ["get", "/registry/a"], home: cli.directory)
            #expect(anonymous.status != 0 && anonymous.stderr.contains("etcdserver: user name is empty"), "\(anonymous.stderr.suffix(600))")
            let log = try await cli.run("log", "etcd")
            #expect(log.stdout.contains("remote deployer"), "\(log.stdout)")
        } catch {
            await server.kill()
            throw error
        }
        await server.stop()
    }

    /// A nested Txn through the JSON gateway as `scoped` (reaching etcd's `/registry/`):
    /// one nested put outside, in a failure branch that would not even run, refuses the
    /// tree whole, nothing written; inside, it runs.
    static func nestedTxnThroughTheGateway(_ etcd: EtcdPeer, _ scoped: Token, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        func body(_ reply: String) -> [String: Any] {
            let text = reply.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
            return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        }
        func b64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        let login = try JSONSerialization.data(withJSONObject: ["name": scoped.id, "password": scoped.text])
        let session = try #require(body(try await LoopbackHTTP.exchange(port: etcd.etcdPort, "POST /v3/auth/authenticate", body: login))["token"] as? String)
        func txn(_ request: String) async throws -> [String: Any] {
            body(try await LoopbackHTTP.exchange(port: etcd.etcdPort, "POST /v3/kv/txn", body: Data(request.utf8), headers: ["Authorization: \(session)"]))
        }
        let put = #"{"request_put":{"key":"\#(b64("/registry/pods/n"))","value":"\#(b64("nested"))"}}"#
        let stray = #"{"request_put":{"key":"\#(b64("/db/password"))","value":"\#(b64("stolen"))"}}"#
        let refused = try await txn(#"{"success":[\#(put),{"request_txn":{"failure":[\#(stray)]}}]}"#)
        #expect(refused["code"] as? Int == 7 && (refused["message"] as? String)?.contains("permission denied") == true, "\(refused)", sourceLocation: sourceLocation)
        #expect(try await Self.served(etcd, ["get", "/registry/pods/n"] + scoped.flags) == "", sourceLocation: sourceLocation)
        let served = try await txn(#"{"success":[{"request_txn":{"success":[\#(put)]}}]}"#)
        #expect((served["responses"] as? [[String: Any]])?.first?["response_txn"] != nil, "\(served)", sourceLocation: sourceLocation)
        #expect(try await Self.served(etcd, scoped.flags + ["get", "/registry/pods/n", "--print-value-only"]) == "nested\n", sourceLocation: sourceLocation)
    }

    static func served(_ etcd: EtcdPeer, _ arguments: [String], stdin: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let output = try await ChildProcess.run(
            "etcdctl", ["--endpoints=127.0.0.1:\(etcd.etcdPort)", "--command-timeout=20s"] + arguments,
            environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": etcd.cli.directory.path]), stdin: .bytes(Data(stdin.utf8)), timeout: .seconds(60)
        )
        #expect(output.termination == .exited(0), "etcdctl txn: \(output.stderr.suffix(600))", sourceLocation: sourceLocation)
        return output.stdout
    }

    static func refused(_ etcd: EtcdPeer, _ arguments: [String], _ message: String, stdin: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let output = try await ChildProcess.run(
            "etcdctl", ["--endpoints=127.0.0.1:\(etcd.etcdPort)", "--command-timeout=20s"] + arguments,
            environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": etcd.cli.directory.path]), stdin: .bytes(Data(stdin.utf8)), timeout: .seconds(60)
        )
        #expect(output.termination != .exited(0), "etcdctl txn was served: \(output.stdout)", sourceLocation: sourceLocation)
        #expect(output.stderr.contains(message), "etcdctl txn: \(output.stderr.suffix(600))", sourceLocation: sourceLocation)
    }
}

extension EtcdAuthTests {
    @Test("a lease is its granter's: a token scoped to /tenant-b/ neither lists, keeps alive, reads, revokes nor puts with /tenant-a/'s lease, answered as for a lease that does not exist; at its per-caller cap B is refused and A still grants", .timeLimit(.minutes(5)))
    func leasesOfTenants() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let tenantA = try await Self.token(etcd, "--role", "write", "--scope", "etcd:etcd:/tenant-a/")
            let tenantB = try await Self.token(etcd, "--role", "write", "--scope", "etcd:etcd:/tenant-b/")
            let admin = try await Self.token(etcd, "--role", "admin")
            try await Self.waitUntilRequired(etcd)

            let granted = try await Self.served(etcd, tenantA.flags + ["lease", "grant", "300"])
            let lease = try #require(granted.split(separator: " ").dropFirst().first.map(String.init), "\(granted)")
            #expect(try await Self.served(etcd, tenantA.flags + ["put", "--lease=\(lease)", "/tenant-a/leader", "a"]) == "OK\n")
            // A lease never granted, for the answers B must get alike.
            let missing = "00000000000007bb"
            #expect(try await Self.served(etcd, tenantB.flags + ["lease", "list"]) == "found 0 leases\n")
            for (id, what) in [(lease, "A's lease"), (missing, "a lease never granted")] {
                let keptAlive = try await Self.refused(etcd, tenantB.flags + ["lease", "keep-alive", "--once", id], "etcdserver: requested lease not found")
                #expect(!keptAlive.stdout.contains("keepalived"), "\(what): \(keptAlive.stdout)")
                #expect(try await Self.served(etcd, tenantB.flags + ["lease", "timetolive", id, "--keys"]) == "lease \(id) already expired\n", "\(what)")
                try await Self.refused(etcd, tenantB.flags + ["lease", "revoke", id], "etcdserver: requested lease not found")
                try await Self.refused(etcd, tenantB.flags + ["put", "--lease=\(id)", "/tenant-b/x", "b"], "etcdserver: requested lease not found")
            }
            // A's lease and key are as they were; A and the whole config's admin reach it.
            #expect(try await Self.served(etcd, tenantA.flags + ["lease", "list"]) == "found 1 leases\n\(lease)\n")
            #expect(try await Self.served(etcd, admin.flags + ["lease", "list"]) == "found 1 leases\n\(lease)\n")
            #expect(try await Self.served(etcd, tenantA.flags + ["lease", "timetolive", lease, "--keys"]).hasSuffix("attached keys([/tenant-a/leader])\n"))
            #expect(try await Self.served(etcd, tenantA.flags + ["lease", "keep-alive", "--once", lease]) == "lease \(lease) keepalived with TTL(300)\n")
            #expect(try await Self.served(etcd, admin.flags + ["get", "/tenant-a/leader", "--print-value-only"]) == "a\n")
            #expect(try await Self.served(etcd, admin.flags + ["get", "/tenant-b/x"]) == "", "nothing refused was written")

            // B takes its per-caller cap through the JSON gateway (one connection, fast);
            // its next grant is refused, naming the cap, and A still grants.
            let session = try await Self.gatewaySession(etcd, tenantB)
            for _ in 0..<1_000 {
                let answer = try await Self.gateway(etcd, "/v3/lease/grant", #"{"TTL":"300"}"#, session: session)
                guard answer.status == 200 else {
                    Issue.record("a grant under the cap was refused: \(answer.status) \(answer.body)")
                    break
                }
            }
            let capped = try await Self.refused(etcd, tenantB.flags + ["lease", "grant", "60"], "per-caller cap")
            #expect(capped.stderr.contains("ResourceExhausted") && capped.stderr.contains("1000 leases") && !capped.stderr.contains("throttl"), "\(capped.stderr)")
            #expect(try await Self.served(etcd, tenantA.flags + ["lease", "grant", "60"]).hasSuffix("granted with TTL(60s)\n"))
            #expect(try await Self.served(etcd, tenantA.flags + ["lease", "list"]).hasPrefix("found 2 leases\n"))
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    /// An etcd token for `token` from the gateway's `auth/authenticate`.
    static func gatewaySession(_ etcd: EtcdPeer, _ token: Token) async throws -> String {
        let body = try JSONSerialization.data(withJSONObject: ["name": token.id, "password": token.text])
        let answer = try await gateway(etcd, "/v3/auth/authenticate", String(decoding: body, as: UTF8.self), session: nil)
        let json = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
        return try #require(json?["token"] as? String, "\(answer.status) \(answer.body)")
    }

    /// A POST of `body` to the etcd port's JSON gateway, as the caller of `session`.
    static func gateway(_ etcd: EtcdPeer, _ path: String, _ body: String, session: String?) async throws -> (status: UInt, body: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(etcd.etcdPort)\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let session { request.headers.add(name: "Authorization", value: session) }
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (response.status.code, String(decoding: bytes.readableBytesView, as: UTF8.self))
    }
}
