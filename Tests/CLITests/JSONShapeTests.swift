import DiscfgTestSupport
import Foundation
import Testing

/// `-f json` names every value for what it is: a token under `token`, its id under `id`,
/// token records under `tokens`, a key file under `encryptionKey`; never a value under
/// the envelope's `message`, which is a sentence for people. The CLI prints what the REST
/// API answers for the same action, through a local store or a server alike.
@Suite("CLI JSON: values named for what they are, as the REST API names them")
struct JSONShapeTests {
    /// The top-level object of a `-f json` answer.
    static func object(_ result: CLIRunner.Result) throws -> [String: Any] {
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any], "\(result.stdout)")
    }

    /// The status of `GET /v1/configs` on `port`, with `token` as the bearer if given.
    static func listStatus(_ port: Int, token: String?) async throws -> Int {
        let reply = try await LoopbackHTTP.exchange(port: port, "GET /v1/configs", body: Data(), headers: token.map { ["Authorization: Bearer \($0)"] } ?? [])
        return Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test("token create -f json answers token, id and the record; the token is accepted by discfg serve and revoking it by id closes it again")
    func tokenCreate() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let created = try Self.object(try await cli.run("token", "create", "--role", "admin", "--description", "ops", "-f", "json"))
        #expect(Set(created.keys) == ["action", "token", "id", "tokens"])
        #expect(created["action"] as? String == "token-create")
        let token = try #require(created["token"] as? String)
        let id = try #require(created["id"] as? String)
        #expect(id.count == 12 && id.allSatisfy(\.isHexDigit))
        #expect(token.hasPrefix("dcfg_\(id)_"), "the id is the token's")
        let records = try #require(created["tokens"] as? [[String: Any]])
        #expect(records.count == 1)
        #expect(records.first?["id"] as? String == id && records.first?["role"] as? String == "admin" && records.first?["description"] as? String == "ops")

        let (server, port) = try await cli.serve(["--auth", "token"])
        do {
            #expect(try await Self.listStatus(port, token: nil) == 401)
            #expect(try await Self.listStatus(port, token: token) == 200, "the printed token is the one the server accepts")
            let revoked = try Self.object(try await cli.run("token", "revoke", id, "-f", "json"))
            #expect(Set(revoked.keys) == ["action", "id", "tokens"])
            #expect(revoked["action"] as? String == "token-revoke" && revoked["id"] as? String == id)
            // Refused once the server's token cache (2 s) reads the revocation.
            try await eventually("the token revoked by the id it printed is refused", interval: .milliseconds(200)) {
                try await Self.listStatus(port, token: token) == 401
            }
        } catch {
            await server.kill()
            throw error
        }
        await server.kill()
    }

    @Test("token list, create and revoke print the same envelope through a server (--store http://) as on the store, the one /admin/tokens answers")
    func sameThroughAServer() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let admin = try #require(try Self.object(try await cli.run("token", "create", "--role", "admin", "-f", "json"))["token"] as? String)
        let local = try Self.object(try await cli.run("token", "list", "-f", "json"))
        #expect(Set(local.keys) == ["action", "tokens"])
        #expect(local["action"] as? String == "tokens", "the action GET /admin/tokens names")

        let (server, port) = try await cli.serve(["--auth", "token"])
        do {
            var remote = cli
            remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
            remote.environment["DISCFG_TOKEN"] = admin
            let created = try Self.object(try await remote.run("token", "create", "--role", "read", "--scope", "app", "-f", "json"))
            #expect(Set(created.keys) == ["action", "token", "id", "tokens"])
            let id = try #require(created["id"] as? String)
            let records = try #require(created["tokens"] as? [[String: Any]])
            #expect(records.first?["configs"] as? [String] == ["app"] && records.first?["role"] as? String == "read")
            let listed = try Self.object(try await remote.run("token", "list", "-f", "json"))
            #expect(listed["action"] as? String == "tokens")
            let ids = try #require(listed["tokens"] as? [[String: Any]]).compactMap { $0["id"] as? String }
            #expect(ids.count == 2 && ids.contains(id))
            #expect(!String(decoding: try JSONSerialization.data(withJSONObject: listed), as: UTF8.self).contains("dcfg_"), "a list never holds a token")
            let revoked = try Self.object(try await remote.run("token", "revoke", id, "-f", "json"))
            #expect(Set(revoked.keys) == ["action", "id", "tokens"] && revoked["id"] as? String == id)

            // The REST answer the CLI printed: the same fields.
            let reply = try await LoopbackHTTP.exchange(
                port: port, "POST /admin/tokens", body: Data(#"{"role": "read"}"#.utf8),
                headers: ["Authorization: Bearer \(admin)", "Content-Type: application/json"]
            )
            let body = try #require(reply.components(separatedBy: "\r\n\r\n").dropFirst().first)
            let answered = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(reply)")
            #expect(Set(answered.keys) == ["action", "token", "id", "tokens"])
            #expect((answered["token"] as? String)?.hasPrefix("dcfg_\(answered["id"] as? String ?? "?")_") == true)
        } catch {
            await server.kill()
            throw error
        }
        await server.kill()
    }

    @Test("key init -f json names the key file under encryptionKey, what create --encryption takes; key rotate's action is key-rotate")
    func keyInit() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let made = try Self.object(try await cli.run("key", "init", "-f", "json"))
        #expect(Set(made.keys) == ["action", "encryptionKey"])
        #expect(made["action"] as? String == "key-init")
        let key = try #require(made["encryptionKey"] as? String)
        #expect(key == "file://\(cli.directory.path)/.config/discfg/keys/default.key")
        #expect(FileManager.default.fileExists(atPath: String(key.dropFirst("file://".count))))
        let created = try Self.object(try await cli.run("create", "sealed", "--encryption", key, "-f", "json"))
        let settings = try #require((created["info"] as? [String: Any])?["settings"] as? [String: Any])
        #expect((settings["encryption"] as? [String: Any])?["key"] as? String == key, "the config names the same key")
        let rotated = try Self.object(try await cli.run("key", "rotate", "sealed", "-f", "json"))
        #expect(rotated["action"] as? String == "key-rotate" && rotated["config"] as? String == "sealed")
        let failed = try await cli.run("key", "rotate", "nothere", "-f", "json")
        #expect(failed.status == 3 && failed.stdout.contains(#""action" : "key-rotate""#), "\(failed.stdout)")
    }
}
