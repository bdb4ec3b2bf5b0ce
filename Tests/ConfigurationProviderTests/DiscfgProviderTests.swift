import AsyncHTTPClient
import Configuration
import ConfigurationTesting
import DiscfgClient
import DiscfgConfiguration
import DiscfgCore
import DiscfgSecrets
import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Testing

/// The swift-configuration provider, on the embedded store and through a live server.
struct DiscfgProviderTests {
    /// Where the provider reads: a SQLite file, or a server over HTTP.
    enum Source: String, CaseIterable, CustomTestStringConvertible {
        case embedded, server
        var testDescription: String { rawValue }
    }

    /// swift-configuration's own test data, as discfg values under `/app`: arrays both as
    /// comma-separated lists and as JSON arrays, bytes as stored.
    static let compatValues: [(String, String)] = [
        ("string", "Hello"), ("other/string", "Other Hello"),
        ("int", "42"), ("other/int", " 24\n"),
        ("double", "3.14"), ("other/double", "2.72"),
        ("bool", "true"), ("other/bool", "false"),
        ("bytes", "magic"), ("other/bytes", "magic2"),
        ("stringy/array", "Hello, World"), ("other/stringy/array", #"["Hello", "Swift"]"#),
        ("inty/array", "42,24"), ("other/inty/array", "[16, 32]"),
        ("doubly/array", "3.14, 2.72"), ("other/doubly/array", "[0.9, 1.8]"),
        ("booly/array", "true, false"), ("other/booly/array", "[false, true, true]"),
        ("byteChunky/array", "bWFnaWM=, bWFnaWMy"), ("other/byteChunky/array", #"["bWFnaWM=", "bWFnaWMy", "bWFnaWM="]"#),
    ]

    @Test("passes swift-configuration's ProviderCompatTest", arguments: Source.allCases)
    func compatibility(source: Source) async throws {
        try await withStore(source) { store, open in
            let name = try ConfigName("app")
            _ = try await store.createConfig(name, settings: ConfigSettings())
            for (key, value) in Self.compatValues {
                _ = try await store.set(try Key("/app/" + key), to: Data(value.utf8), in: name)
            }
            // Siblings of the prefix are not served.
            _ = try await store.set(try Key("/application/string"), to: Data("not mine".utf8), in: name)
            let provider = try await open("app", "/app", nil)
            try await ProviderCompatTest(provider: provider).runTest()
            let reader = ConfigReader(provider: provider)
            #expect(reader.string(forKey: "string") == "Hello")
            #expect(provider.snapshot().providerName == "DiscfgProvider")
            #expect(try provider.value(forKey: ["other", "string"], type: .string).encodedKey == "/app/other/string")
        }
    }

    @Test("values read as the type asked for, and say which key is not that type")
    func typedValues() async throws {
        let store = MemoryStore()
        let name = try ConfigName("app")
        _ = try await store.createConfig(name, settings: ConfigSettings())
        let values = [
            "/port": "8080", "/ratio": "0.25", "/on": "YES", "/flags": "[1, 0]", "/truths": "[true, false]",
            "/empty": "", "/word": "eighty", "/blob": "\u{FF}", "/nested": "[[1], 2]", "/dotted.name": "x",
            // A nesting bomb the size of the largest value: read as a list, without a crash.
            "/deep": String(repeating: "[", count: Limits.maxValueBytes / 2) + String(repeating: "]", count: Limits.maxValueBytes / 2),
        ]
        for (key, value) in values {
            let data = key == "/blob" ? Data([0xFF, 0x00]) : Data(value.utf8)
            _ = try await store.set(try Key(key), to: data, in: name)
        }
        let provider = try await DiscfgProvider(store: store, config: "app")
        let reader = ConfigReader(provider: provider)
        #expect(try reader.requiredInt(forKey: "port") == 8080)
        #expect(try reader.requiredDouble(forKey: "ratio") == 0.25)
        #expect(try reader.requiredBool(forKey: "on"))
        #expect(try reader.requiredIntArray(forKey: "flags") == [1, 0])
        #expect(try reader.requiredBoolArray(forKey: "truths") == [true, false])
        #expect(try reader.requiredStringArray(forKey: "empty") == [])
        #expect(try reader.requiredBytes(forKey: "blob") == [0xFF, 0x00])
        #expect(try reader.requiredString(forKey: ConfigKey(["dotted.name"])) == "x")
        // A nested JSON array is not an array of scalars: it is read as a list.
        #expect(try reader.requiredStringArray(forKey: "nested") == ["[[1]", "2]"])
        #expect(try reader.requiredStringArray(forKey: "deep").count == 1)

        // Integers at the edges: -1 and 2^63 - 1 read; 2^63 and 2^64 do not fit and say so.
        for (text, expected) in [("0", 0), ("-1", -1), ("9223372036854775807", Int.max)] {
            _ = try await store.set(try Key("/edge"), to: Data(text.utf8), in: name)
            let edge = try await DiscfgProvider(store: store, config: "app", prefix: "/")
            #expect(try edge.value(forKey: ["edge"], type: .int).value?.content == .int(expected))
        }
        for text in ["9223372036854775808", "18446744073709551616", "-9223372036854775809"] {
            _ = try await store.set(try Key("/edge"), to: Data(text.utf8), in: name)
            let edge = try await DiscfgProvider(store: store, config: "app")
            #expect(throws: DiscfgError.self, "\(text)") { try edge.value(forKey: ["edge"], type: .int) }
        }
        let word = #expect(throws: DiscfgError.self) { try provider.value(forKey: ["word"], type: .int) }
        #expect(word?.message.contains("/word") == true && word?.message.contains("int") == true)
        let binary = #expect(throws: DiscfgError.self) { try provider.value(forKey: ["blob"], type: .string) }
        #expect(binary?.message.contains("binary") == true)
        // Keys that name no discfg key are absent, not errors.
        for components in [[], [""], ["a/b"], [".."], ["a", ""]] {
            #expect(try provider.value(forKey: AbsoluteConfigKey(components), type: .string).value == nil)
        }
        #expect(reader.int(forKey: "word", default: 7) == 7)
        await #expect(throws: DiscfgError.self) { try await DiscfgProvider(store: store, config: "missing") }
        await #expect(throws: DiscfgError.self) { try await DiscfgProvider(store: store, config: "app", prefix: "/a//b") }
    }

    @Test("secrets are opened in the process and marked secret, so swift-configuration redacts them", arguments: Source.allCases)
    func secrets(source: Source) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-provider-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyPath = directory.appendingPathComponent("app.key").path
        let keyFile = try FileKey.create(at: keyPath)
        let keys = StandardKeyResolver(environment: [:])
        try await withStore(source) { store, open in
            let name = try ConfigName("app")
            let writer = ConfigSecrets(store: store, config: name, keyring: SecretKeyring(resolver: keys))
            _ = try await store.createConfig(name, settings: ConfigSettings(encryption: try await writer.keyring.newEncryption(keyName: keyFile.name, config: name)))
            _ = try await writer.set(try Key("/db/password"), to: Data("hunter2".utf8), options: SetOptions(contentType: "text/plain"))
            _ = try await store.set(try Key("/db/url"), to: Data("postgres://app:hunter2@db/app".utf8), in: name)
            _ = try await store.set(try Key("/db/host"), to: Data("db.internal".utf8), in: name)

            let provider = try await open("app", "/", keys)
            let password = try #require(try provider.value(forKey: ["db", "password"], type: .string).value)
            #expect(password.content == .string("hunter2") && password.isSecret)
            #expect(password.description.contains("REDACTED") && !password.description.contains("hunter2"))
            #expect(try provider.value(forKey: ["db", "host"], type: .string).value?.isSecret == false)
            #expect(try await provider.fetchValue(forKey: ["db", "password"], type: .string).value?.content == .string("hunter2"))
            let notNumber = #expect(throws: DiscfgError.self) { try provider.value(forKey: ["db", "password"], type: .int) }
            #expect(notNumber?.message.contains("hunter2") == false, "errors never quote a secret")

            // Plain values can be marked secret too.
            let marked = try await DiscfgProvider(store: store, config: "app", keys: keys, secretsSpecifier: .specific(["/db/url"]))
            #expect(try marked.value(forKey: ["db", "url"], type: .string).value?.isSecret == true)

            // Without keys, or with the wrong key, the provider does not start; the error names the secret or the key.
            let keyless = await #expect(throws: DiscfgError.self) { try await DiscfgProvider(store: store, config: "app") }
            #expect(keyless?.message.contains("/db/password") == true)
            try FileManager.default.removeItem(atPath: keyPath)
            _ = try FileKey.create(at: keyPath)
            let wrong = await #expect(throws: DiscfgError.self) { try await DiscfgProvider(store: store, config: "app", keys: keys) }
            #expect(wrong?.message.contains("app.key") == true)
            // A prefix without secrets needs no key.
            #expect(try await DiscfgProvider(store: store, config: "app", prefix: "/none").revision > .zero)
        }
    }

    @Test("with JSON members, members of JSON values are keys too: nested, array elements, typed, followed live; a key that exists wins; secrets stay secret", .timeLimit(.minutes(1)), arguments: Source.allCases)
    func jsonMembers(source: Source) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-provider-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = try FileKey.create(at: directory.appendingPathComponent("app.key").path)
        let keys = StandardKeyResolver(environment: [:])
        try await withStore(source, jsonMembers: true) { store, open in
            let name = try ConfigName("app")
            let writer = ConfigSecrets(store: store, config: name, keyring: SecretKeyring(resolver: keys))
            _ = try await store.createConfig(name, settings: ConfigSettings(encryption: try await writer.keyring.newEncryption(keyName: keyFile.name, config: name)))
            let settings = #"{"db": {"host": "db1", "port": 5433, "replicas": ["r1", "r2"], "ratio": 0.5, "tls": true}, "servers": [{"host": "a"}], "none": null}"#
            let json = SetOptions(contentType: "application/json")
            _ = try await store.set(try Key("/app/settings"), to: Data(settings.utf8), in: name, options: json)
            _ = try await store.set(try Key("/app/settings/db/host"), to: Data("override".utf8), in: name)
            _ = try await store.set(try Key("/app/plain"), to: Data("{not json".utf8), in: name)
            _ = try await writer.set(try Key("/app/db"), to: Data(#"{"password": "hunter2"}"#.utf8), options: json)

            let provider = try await open("app", "/app", keys)
            let reader = ConfigReader(provider: provider)
            #expect(try reader.requiredInt(forKey: "settings.db.port") == 5433)
            #expect(try reader.requiredString(forKey: "settings.db.port") == "5433")
            #expect(try reader.requiredStringArray(forKey: "settings.db.replicas") == ["r1", "r2"])
            #expect(try reader.requiredDouble(forKey: "settings.db.ratio") == 0.5)
            #expect(try reader.requiredBool(forKey: "settings.db.tls"))
            #expect(try reader.requiredString(forKey: "settings.servers.0.host") == "a")
            #expect(try reader.requiredString(forKey: "settings.db.host") == "override", "a key that exists wins over a member")
            #expect(try reader.requiredString(forKey: "settings.servers") == #"[{"host":"a"}]"#, "an array or object reads as its JSON")
            #expect(try reader.requiredString(forKey: "settings") == settings, "the key itself reads as before")
            for absent in ["settings.none", "settings.db.user", "settings.servers.1.host", "settings.db.port.x", "plain.x", "missing.x"] {
                #expect(reader.string(forKey: ConfigKey(absent)) == nil, "\(absent)")
            }
            let member = try provider.value(forKey: ["settings", "db", "port"], type: .int)
            #expect(member.encodedKey == "/app/settings/db/port" && member.value?.isSecret == false)
            let mismatch = #expect(throws: DiscfgError.self) { try provider.value(forKey: ["settings", "servers", "0", "host"], type: .int) }
            #expect(mismatch?.message.contains("/app/settings/servers/0/host") == true)
            #expect(try await provider.fetchValue(forKey: ["settings", "db", "port"], type: .int).value?.content == .int(5433))
            #expect(try await provider.fetchValue(forKey: ["settings", "db", "host"], type: .string).value?.content == .string("override"))

            // A member of a secret is opened and stays secret; its errors do not quote it.
            let password = try #require(try provider.value(forKey: ["db", "password"], type: .string).value)
            #expect(password.content == .string("hunter2") && password.isSecret)
            let secretMismatch = #expect(throws: DiscfgError.self) { try provider.value(forKey: ["db", "password"], type: .int) }
            #expect(secretMismatch?.message.contains("hunter2") == false)

            // Without the option, members are not keys.
            let whole = try await DiscfgProvider(store: store, config: "app", prefix: "/app", keys: keys)
            #expect(try whole.value(forKey: ["settings", "db", "port"], type: .int).value == nil)

            // A member changes with the value holding it, and its watchers see it.
            try await withRunning(provider) {
                try await reader.watchInt(forKey: "settings.db.port") { updates in
                    var values = updates.makeAsyncIterator()
                    #expect(try await values.next() == 5433)
                    _ = try await store.set(try Key("/app/settings"), to: Data(#"{"db": {"port": 6000}}"#.utf8), in: name, options: json)
                    #expect(try await values.next() == 6000)
                    _ = try await store.set(try Key("/app/settings/db/port"), to: Data("7000".utf8), in: name)
                    #expect(try await values.next() == 7000, "a key created at the member's path takes over")
                }
            }
        }
    }

    @Test("run as a service, it follows changes: value and snapshot watchers see them, secrets included", .timeLimit(.minutes(1)), arguments: Source.allCases)
    func liveReload(source: Source) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-provider-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = try FileKey.create(at: directory.appendingPathComponent("app.key").path)
        let keys = StandardKeyResolver(environment: [:])
        try await withStore(source) { store, open in
            let name = try ConfigName("app")
            let writer = ConfigSecrets(store: store, config: name, keyring: SecretKeyring(resolver: keys))
            _ = try await store.createConfig(name, settings: ConfigSettings(encryption: try await writer.keyring.newEncryption(keyName: keyFile.name, config: name)))
            _ = try await store.set(try Key("/app/limit"), to: Data("10".utf8), in: name)
            let provider = try await open("app", "/app", keys)
            let reader = ConfigReader(provider: provider)
            try await withRunning(provider) {
                try await reader.watchInt(forKey: "limit") { updates in
                    var values = updates.makeAsyncIterator()
                    #expect(try await values.next() == 10)
                    _ = try await store.set(try Key("/app/limit"), to: Data("20".utf8), in: name)
                    #expect(try await values.next() == 20)
                    // Changes elsewhere in the config do not disturb this key.
                    _ = try await store.set(try Key("/other"), to: Data("x".utf8), in: name)
                    _ = try await store.set(try Key("/app/unrelated"), to: Data("x".utf8), in: name)
                    _ = try await store.delete(try Key("/app/limit"), in: name, conditions: [])
                    let afterDelete: Int?? = try await values.next()
                    #expect(afterDelete == .some(nil), "the deleted key is absent, and the watch goes on")
                }
                let change = try await writer.set(try Key("/app/token"), to: Data("s3cret".utf8), options: SetOptions())
                try await eventually("the provider reaches the change", timeout: .seconds(15)) { provider.revision >= change.revision }
                let token = try #require(try provider.value(forKey: ["token"], type: .string).value)
                #expect(token.content == .string("s3cret") && token.isSecret)
                #expect(try reader.requiredString(forKey: "unrelated") == "x")
                #expect(reader.string(forKey: "other") == nil)

                // A snapshot watcher sees each change as a whole snapshot.
                try await reader.watchSnapshot { snapshots in
                    var iterator = snapshots.makeAsyncIterator()
                    let first = try #require(try await iterator.next())
                    #expect(first.string(forKey: "token") == "s3cret")
                    _ = try await writer.set(try Key("/app/token"), to: Data("s3cret2".utf8), options: SetOptions())
                    while let next = try await iterator.next() {
                        if next.string(forKey: "token") == "s3cret2" { break }
                    }
                }

                // A tampered secret arriving later makes reads of that key throw, naming it.
                let sealed = try #require(try await store.get(try Key("/app/token"), in: name))
                var tampered = sealed.value
                tampered[tampered.count - 1] ^= 1
                let bad = try await store.set(try Key("/app/token"), to: tampered, in: name, options: SetOptions(contentType: SecretMarker.contentType))
                try await eventually("the provider reaches the refused change", timeout: .seconds(15)) { provider.revision >= bad.revision }
                let unreadable = #expect(throws: DiscfgError.self) { try provider.value(forKey: ["token"], type: .string) }
                #expect(unreadable?.message.contains("/app/token") == true)
            }
        }
    }

    @Test("a config deleted and created again is loaded again, and followed from there", .timeLimit(.minutes(1)), arguments: Source.allCases)
    func reloadsARecreatedConfig(source: Source) async throws {
        try await withStore(source) { store, open in
            let name = try ConfigName("app")
            _ = try await store.createConfig(name, settings: ConfigSettings())
            _ = try await store.set(try Key("/mode"), to: Data("blue".utf8), in: name)
            let provider = try await open("app", "/", nil)
            let reader = ConfigReader(provider: provider)
            try await withRunning(provider) {
                // Once the provider follows the config, it is deleted and created again.
                _ = try await store.set(try Key("/mode"), to: Data("cyan".utf8), in: name)
                try await eventually("mode reads cyan", timeout: .seconds(15)) { reader.string(forKey: "mode") == "cyan" }
                try await store.deleteConfig(name)
                _ = try await store.createConfig(name, settings: ConfigSettings())
                _ = try await store.set(try Key("/mode"), to: Data("green".utf8), in: name)
                try await eventually("mode reads green", timeout: .seconds(15)) { reader.string(forKey: "mode") == "green" }
                _ = try await store.set(try Key("/mode"), to: Data("red".utf8), in: name)
                try await eventually("mode reads red", timeout: .seconds(15)) { reader.string(forKey: "mode") == "red" }
            }
        }
    }

    @Test("the Hummingbird service of docs/swift.md: its address from discfg, a live setting, a secret", .timeLimit(.minutes(1)))
    func hummingbirdService() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-provider-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = try FileKey.create(at: directory.appendingPathComponent("shop.key").path)
        let keys = StandardKeyResolver(environment: [:])
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
        let name = try ConfigName("shop")
        let writer = ConfigSecrets(store: store, config: name, keyring: SecretKeyring(resolver: keys))
        _ = try await store.createConfig(name, settings: ConfigSettings(encryption: try await writer.keyring.newEncryption(keyName: keyFile.name, config: name)))
        for (key, value) in ["/api/http/host": "127.0.0.1", "/api/http/port": "0", "/api/greeting": "hello"] {
            _ = try await store.set(try Key(key), to: Data(value.utf8), in: name)
        }
        _ = try await writer.set(try Key("/api/db/password"), to: Data("hunter2".utf8), options: SetOptions())

        let discfg = try await DiscfgProvider(store: store, config: "shop", prefix: "/api", keys: keys)
        let config = ConfigReader(providers: [EnvironmentVariablesProvider(environmentVariables: [:]), discfg])
        #expect(try config.requiredString(forKey: "db.password", isSecret: true) == "hunter2")
        let router = Router()
        router.get("/hello") { _, _ in config.string(forKey: "greeting", default: "hi") }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "discfg-provider-test")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(reader: config.scoped(to: "http")),
            services: [discfg],
            onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) },
            logger: logger
        )
        let group = ServiceGroup(services: [app], logger: logger)
        let running = Task { try await group.run() }
        defer { running.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        func hello() async throws -> String {
            let response = try await HTTPClient.shared.get(url: "http://127.0.0.1:\(port)/hello").get()
            return response.body.map { String(buffer: $0) } ?? ""
        }
        #expect(try await hello() == "hello")
        _ = try await store.set(try Key("/api/greeting"), to: Data("bonjour".utf8), in: name)
        try await eventually("hello reads bonjour", timeout: .seconds(15)) { (try? await hello()) == "bonjour" }
        await group.triggerGracefulShutdown()
        try await running.value
    }

    // MARK: Helpers

    typealias Open = (_ config: String, _ prefix: String, _ keys: (any KeyResolver)?) async throws -> DiscfgProvider

    /// Runs `body` with a store to write to and a way to open a provider reading it from `source`.
    private func withStore(_ source: Source, jsonMembers: Bool = false, _ body: (any ConfigStore, Open) async throws -> Void) async throws {
        switch source {
        case .embedded:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-provider-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
            try await body(store) { config, prefix, keys in
                try await DiscfgProvider(store: store, config: config, prefix: prefix, keys: keys, jsonMembers: jsonMembers)
            }
        case .server:
            try await withServer(try await LiveServer.start()) { server in
                let url = URL(string: server.baseURL)!
                try await body(try ConfigClient(url: url).store) { config, prefix, keys in
                    try await DiscfgProvider(client: try ConfigClient(url: url, keys: keys), config: config, prefix: prefix, jsonMembers: jsonMembers)
                }
            }
        }
    }
}
