import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The two kinds of scope, discfg's key prefixes and etcd's byte prefixes, on the etcd
/// API's two faces (gRPC through etcdctl, and the HTTP/JSON gateway) of one `serve
/// --etcd`: neither reaches the other's keys. The REST routes and the Lambda function
/// are walked with both kinds by `ScopeMatrixTests` and `LambdaScopeTests`.
@Suite("Scopes: neither kind reaches the other's keys on the etcd API's faces")
struct ScopeKindFaceTests {
    /// `curl` posting `body` to the gateway at `path`, with an etcd token when given:
    /// the HTTP status and the body.
    static func gateway(_ etcd: EtcdPeer, _ path: String, _ body: [String: String], token: String?) async throws -> (status: Int, body: String) {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        var arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", json]
        if let token { arguments += ["-H", "Authorization: \(token)"] }
        let output = try await ChildProcess.run("curl", arguments + ["http://127.0.0.1:\(etcd.etcdPort)\(path)"], environment: ChildProcess.environment(), timeout: .seconds(60))
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// The etcd token the gateway's `Authenticate` answers for a discfg token.
    static func session(_ etcd: EtcdPeer, _ token: EtcdAuthTests.Token) async throws -> String {
        let reply = try await gateway(etcd, "/v3/auth/authenticate", ["name": token.id, "password": token.text], token: nil)
        let object = try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
        return try #require(object?["token"] as? String, "authenticate: \(reply.status) \(reply.body)")
    }

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    @Test("a discfg-space scope reaches no etcd key and an etcd-space scope no discfg key, through etcdctl and the gateway", .timeLimit(.minutes(4)))
    func bothKindsOnBothFaces() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let admin = try await EtcdAuthTests.token(etcd, "--role", "admin")
            let etcdSpace = try await EtcdAuthTests.token(etcd, "--role", "write", "--scope", "etcd:etcd:app/")
            let discfgSpace = try await EtcdAuthTests.token(etcd, "--role", "write", "--scope", "etcd:/app/")
            try await EtcdAuthTests.waitUntilRequired(etcd)
            #expect(try await EtcdAuthTests.served(etcd, admin.flags + ["put", "app/x", "etcd-value"]) == "OK\n")
            #expect(try await etcd.cli.run("set", "etcd", "/app/db/password", "hunter2").status == 0)

            // gRPC: the etcd scope reads its etcd keys and only those; the discfg scope none.
            #expect(try await EtcdAuthTests.served(etcd, etcdSpace.flags + ["get", "app/", "--prefix", "--print-value-only"]) == "etcd-value\n")
            for arguments in [["get", "app/x"], ["get", "app/", "--prefix"], ["del", "app/", "--prefix"], ["put", "app/y", "1"]] {
                try await EtcdAuthTests.refused(etcd, discfgSpace.flags + arguments, EtcdAuthTests.denied)
            }

            // The gateway: the same answers.
            let etcdSession = try await Self.session(etcd, etcdSpace)
            let discfgSession = try await Self.session(etcd, discfgSpace)
            let prefix = ["key": Self.base64("app/"), "range_end": Self.base64("app0")]
            let read = try await Self.gateway(etcd, "/v3/kv/range", prefix, token: etcdSession)
            #expect(read.status == 200 && read.body.contains(Self.base64("etcd-value")) && !read.body.contains(Self.base64("hunter2")), "\(read)")
            for (path, body) in [("/v3/kv/range", prefix), ("/v3/kv/deleterange", prefix), ("/v3/kv/put", ["key": Self.base64("app/y"), "value": Self.base64("1")])] {
                let refused = try await Self.gateway(etcd, path, body, token: discfgSession)
                #expect(refused.status == 403 && refused.body.contains("permission denied"), "\(path): \(refused)")
            }

            // Nothing changed: the etcd key and the discfg key are both still there.
            #expect(try await EtcdAuthTests.served(etcd, admin.flags + ["get", "app/x", "--print-value-only"]) == "etcd-value\n")
            let kept = try await etcd.cli.run("get", "etcd", "/app/db/password")
            #expect(kept.status == 0 && kept.stdout.contains("hunter2"), "\(kept.stderr)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }
}
