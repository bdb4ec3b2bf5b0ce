import DiscfgAPI
import DiscfgClient
import DiscfgCore
import DiscfgJSON
import DiscfgSQLite
import DiscfgSecrets
import DiscfgTestSupport
import Foundation
import Testing

@Suite("Client: the application library over a live server")
struct ClientTests {
    struct Limits: Decodable, Equatable {
        var rps: Int
        var burst: Int
    }

    @Test("typed reads: string, int, bool, Decodable JSON; missing keys are nil; wrong types say so")
    func typedReads() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/db/host", "db1")
            _ = try await server.put("/v1/app/keys/db/port", "5432")
            _ = try await server.put("/v1/app/keys/feature/on", "yes")
            _ = try await server.put("/v1/app/keys/limits", #"{"rps": 100, "burst": 20}"#)
            let client = try ConfigClient(url: URL(string: server.baseURL)!)
            let cfg = try await client.config("app")
            #expect(try await cfg.string("/db/host") == "db1")
            #expect(try await cfg.int("db/port") == 5432)
            #expect(try await cfg.bool("/feature/on") == true)
            #expect(try await cfg.decode("/limits", as: Limits.self) == Limits(rps: 100, burst: 20))
            #expect(try await cfg.string("/missing") == nil)
            await #expect(throws: DiscfgError.self) { try await cfg.int("/db/host") }
            await #expect(throws: DiscfgError.self) { try await client.config("nope") }
        }
    }

    struct Database: Decodable, Equatable {
        var host: String
        var port: Int
    }

    @Test("JSON reads: a pointer into a value, a part decoded; absent parts are nil; bad pointers, values that are not JSON and wrong types say so")
    func jsonReads() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            let settings = #"{"db": {"host": "db1", "port": 5433}, "servers": [{"host": "a"}, {"host": "b"}], "a/b": {"m~n": true}}"#
            _ = try await server.put("/v1/app/keys/settings", settings, headers: [("Content-Type", "application/json")])
            _ = try await server.put("/v1/app/keys/word", "db1")
            let cfg = try await ConfigClient(url: URL(string: server.baseURL)!).config("app", maxAge: .seconds(60))

            #expect(try await cfg.json("/settings", at: "/db/port") == 5433)
            #expect(try await cfg.json("/settings", at: "/servers/1/host") == "b")
            #expect(try await cfg.json("/settings", at: "/a~1b/m~0n") == true)
            #expect(try await cfg.json("/settings") == (try JSONParser.parse(settings)))
            #expect(try await cfg.decode("/settings", at: "/db", as: Database.self) == Database(host: "db1", port: 5433))
            #expect(try await cfg.decode("/settings", at: "/db/port", as: Int.self) == 5433)
            #expect(try await cfg.decode("/settings", at: "/servers", as: [[String: String]].self)?.map { $0["host"] } == ["a", "b"])
            // Nothing there: nil, as for an absent key.
            #expect(try await cfg.json("/settings", at: "/db/user") == nil)
            #expect(try await cfg.json("/settings", at: "/servers/2") == nil)
            #expect(try await cfg.decode("/settings", at: "/db/port/x", as: Int.self) == nil)
            #expect(try await cfg.json("/missing", at: "/db") == nil)

            let pointer = await #expect(throws: DiscfgError.self) { try await cfg.json("/settings", at: "db/port") }
            #expect(pointer?.code == .invalidArgument && pointer?.field == "path")
            let notJSON = await #expect(throws: DiscfgError.self) { try await cfg.json("/word", at: "/x") }
            #expect(notJSON?.message.contains("/word is not valid JSON: line 1, column 1") == true)
            let wrongType = await #expect(throws: DiscfgError.self) { try await cfg.decode("/settings", at: "/db/host", as: Int.self) }
            #expect(wrongType?.message.contains("/settings at /db/host does not decode as Int") == true)

            // Parts are read from the cached value: within max age, a change is not seen yet.
            _ = try await server.put("/v1/app/keys/settings", #"{"db": {"port": 6000}}"#, headers: [("Content-Type", "application/json")])
            #expect(try await cfg.json("/settings", at: "/db/port") == 5433)
            let fresh = try await ConfigClient(url: URL(string: server.baseURL)!).config("app", maxAge: .zero)
            #expect(try await fresh.json("/settings", at: "/db/port") == 6000)
        }
    }

    @Test("the patches of docs/swift.md, through the client's store: a merge, a JSON patch under a condition; a failed test changes nothing")
    func patchesThroughTheClientsStore() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/app/settings", #"{"db": {"host": "db1", "port": 5433}}"#, headers: [("Content-Type", "application/json")])
            let client = try ConfigClient(url: URL(string: server.baseURL)!)
            let cfg = try await client.config("app", maxAge: .zero)

            let settings = try Key("/app/settings")
            _ = try await client.store.patch(settings, .merge(["db": ["port": 5434]]), in: cfg.name, conditions: [])
            let ops = try ValuePatch(jsonPatch: try JSONParser.parse(#"[{"op": "test", "path": "/db/port", "value": 5434}, {"op": "replace", "path": "/db/port", "value": 5435}]"#))
            _ = try await client.store.patch(settings, ops, in: cfg.name, conditions: [.version(2)])
            #expect(try await cfg.decode("/app/settings", at: "/db", as: Database.self) == Database(host: "db1", port: 5435))

            let failed = await #expect(throws: DiscfgError.self) { try await client.store.patch(settings, ops, in: cfg.name, conditions: []) }
            #expect(failed?.code == .patchFailed)
            let stale = await #expect(throws: DiscfgError.self) { try await client.store.patch(settings, .merge(["debug": true]), in: cfg.name, conditions: [.version(2)]) }
            #expect(stale?.code == .conditionFailed)
            #expect(try await cfg.json("/app/settings") == ["db": ["host": "db1", "port": 5435]])
        }
    }

    @Test("a pointer reads into a secret once it is opened; a secret that is not JSON is refused without quoting it")
    func jsonReadsOfSecrets() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-client-json-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = try FileKey.create(at: directory.appendingPathComponent("app.key").path)
        let keys = StandardKeyResolver(environment: [:])
        try await withServer(try await LiveServer.start()) { server in
            let remote = try ConfigClient(url: URL(string: server.baseURL)!).store
            let name = try ConfigName("app")
            let writer = ConfigSecrets(store: remote, config: name, keyring: SecretKeyring(resolver: keys))
            _ = try await remote.createConfig(name, settings: ConfigSettings(encryption: try await writer.keyring.newEncryption(keyName: keyFile.name, config: name)))
            let credentials = Data(#"{"user": "app", "password": "hunter2"}"#.utf8)
            _ = try await writer.set(try Key("/db/credentials"), to: credentials, options: SetOptions(contentType: "application/json"))
            _ = try await writer.set(try Key("/db/password"), to: Data("hunter2".utf8), options: SetOptions(contentType: "text/plain"))

            let cfg = try await ConfigClient(url: URL(string: server.baseURL)!, keys: keys).config("app")
            #expect(try await cfg.json("/db/credentials", at: "/password") == "hunter2")
            #expect(try await cfg.decode("/db/credentials", at: "/user", as: String.self) == "app")
            let plain = await #expect(throws: DiscfgError.self) { try await cfg.json("/db/password", at: "/x") }
            #expect(plain?.message == "/db/password is a secret whose value is not JSON")

            let keyless = try await ConfigClient(url: URL(string: server.baseURL)!).config("app")
            let refused = await #expect(throws: DiscfgError.self) { try await keyless.json("/db/credentials", at: "/password") }
            #expect(refused?.message.contains("secret") == true)
        }
    }

    @Test("the cache serves reads within max age, then reads again")
    func cacheMaxAge() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/k", "one")
            let client = try ConfigClient(url: URL(string: server.baseURL)!)
            let cached = try await client.config("app", maxAge: .seconds(60))
            let fresh = try await client.config("app", maxAge: .zero)
            #expect(try await cached.string("/k") == "one")
            _ = try await server.put("/v1/app/keys/k", "two")
            #expect(try await cached.string("/k") == "one")
            #expect(try await fresh.string("/k") == "two")
        }
    }

    @Test("live mode keeps the cache current, and resumes after the server restarts", .timeLimit(.minutes(1)))
    func liveMode() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-live-\(UUID().uuidString)")
        // The kernel picks a free port; the restart binds the same one again.
        let server = try await LiveServer.start(directory: directory)
        let port = server.port
        _ = try await server.put("/v1/app", "")
        _ = try await server.put("/v1/app/keys/k", "one")
        let client = try ConfigClient(url: URL(string: server.baseURL)!)
        let cfg = try await client.config("app")
        try await cfg.followChanges()
        let updates = await cfg.updates()
        var iterator = updates.makeAsyncIterator()
        #expect(try await cfg.string("/k") == "one")

        _ = try await server.put("/v1/app/keys/k", "two")
        #expect(await iterator.next()?.item?.value == Data("two".utf8))
        #expect(try await cfg.string("/k") == "two")

        // The server goes away; changes happen while it is down (straight to the file); it comes back.
        await server.halt()
        let offline = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
        _ = try await offline.set(Key("/k"), to: Data("three".utf8), in: ConfigName("app"))
        _ = try await offline.set(Key("/new"), to: Data("fresh".utf8), in: ConfigName("app"))
        try await withServer(try await restart(port: port, directory: directory)) { _ async throws in
            #expect(await iterator.next()?.revision == 3)
            #expect(await iterator.next()?.revision == 4)
            #expect(try await cfg.string("/k") == "three")
            #expect(try await cfg.string("/new") == "fresh")
            #expect(await cfg.revision == 4)
            await cfg.stopFollowing()
        }
    }

    /// Starts a server again on `port`, which a client connection elsewhere may hold for a moment.
    private func restart(port: Int, directory: URL) async throws -> LiveServer {
        try await eventually("a server starts again on port \(port)", timeout: .seconds(5), interval: .milliseconds(100)) {
            try? await LiveServer.start(port: port, directory: directory)
        }
    }

    @Test("a followed config that is deleted and created again is followed again, retrying until it exists")
    func followsARecreatedConfig() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/app", "")
            _ = try await server.put("/v1/app/keys/k", "one")
            let client = try ConfigClient(url: URL(string: server.baseURL)!)
            let cfg = try await client.config("app")
            try await cfg.followChanges()
            let updates = await cfg.updates()
            var iterator = updates.makeAsyncIterator()

            #expect(try await server.request(.DELETE, "/v1/app").status == 200)
            // Gone for longer than a few reconnect attempts, then back with new contents.
            try await eventually("the follower drops the deleted config", timeout: .seconds(15)) { await cfg.revision == nil }
            try await Task.sleep(for: .milliseconds(1500))
            #expect(await cfg.revision == nil)
            _ = try await server.put("/v1/app", "")
            let again = try #require(try await server.put("/v1/app/keys/k", "again").envelope().item?.modRevision)
            // The follower may load the new config before or after "again" was set; either
            // way it reaches that revision.
            try await eventually("the follower reaches the config made again", timeout: .seconds(15)) { await (cfg.revision ?? .zero) >= again }
            #expect(try await cfg.string("/k") == "again")

            _ = try await server.put("/v1/app/keys/k", "later")
            // Changes it followed as events up to "again", if it loaded the config before them.
            var next = await iterator.next()
            while let event = next, event.revision <= again { next = await iterator.next() }
            #expect(next?.item?.value == Data("later".utf8))
            #expect(try await cfg.string("/k") == "later")
            await cfg.stopFollowing()
            #expect(await cfg.revision == nil)
        }
    }

    @Test("secrets reach the application opened when the client has keys, live updates included, and are refused without keys")
    func secrets() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-client-secrets-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = try FileKey.create(at: directory.appendingPathComponent("app.key").path)
        let keys = StandardKeyResolver(environment: [:])
        try await withServer(try await LiveServer.start()) { server in
            let remote = try ConfigClient(url: URL(string: server.baseURL)!).store
            let name = try ConfigName("app")
            let writer = ConfigSecrets(store: remote, config: name, keyring: SecretKeyring(resolver: keys))
            _ = try await remote.createConfig(name, settings: ConfigSettings(encryption: try await writer.keyring.newEncryption(keyName: keyFile.name, config: name)))
            _ = try await writer.set(try Key("/db/password"), to: Data("hunter2".utf8), options: SetOptions(contentType: "text/plain"))
            let stored = try #require(try await remote.get(try Key("/db/password"), in: name))
            #expect(stored.isSecret && stored.value.range(of: Data("hunter2".utf8)) == nil, "the server holds ciphertext")

            let client = try ConfigClient(url: URL(string: server.baseURL)!, keys: keys)
            let cfg = try await client.config("app")
            #expect(try await cfg.string("/db/password") == "hunter2")
            #expect(try await cfg.item("/db/password")?.contentType == "text/plain")

            try await cfg.followChanges()
            // A rotation and a new value: the follower opens it with the new data key.
            let rotated = try await writer.keyring.rotated(try #require(try await remote.configInfo(name).settings.encryption), config: name)
            _ = try await remote.updateConfig(name, ConfigSettingsPatch(encryption: rotated))
            let change = try await writer.set(try Key("/db/password"), to: Data("hunter3".utf8), options: SetOptions())
            try await eventually("the follower reaches the rotated secret", timeout: .seconds(15)) { await (cfg.revision ?? .zero) >= change.revision }
            #expect(try await cfg.string("/db/password") == "hunter3")
            await cfg.stopFollowing()

            let keyless = try await ConfigClient(url: URL(string: server.baseURL)!).config("app")
            let refused = await #expect(throws: DiscfgError.self) { try await keyless.string("/db/password") }
            #expect(refused?.message.contains("secret") == true)
        }
    }
}
