import Crypto
import DiscfgCore
@testable import DiscfgSecrets
import DiscfgTestSupport
import Foundation
import Synchronization
import Testing

/// Seals bound to their key's create revision, through the one opener (`SecretReader`),
/// on a real store; values sealed in the first format, and how a config leaves them.
@Suite("Secrets: bound to the key's create revision")
struct SecretBindingTests {
    /// A memory store with config `app` encrypted by a fresh key file.
    struct Fixture {
        let directory: String
        let store = MemoryStore()
        let config = try! ConfigName("app")
        let secrets: ConfigSecrets

        init(encryption make: (SecretKeyring, String, ConfigName) async throws -> EncryptionSettings) async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-binding-\(UUID().uuidString)").path
            let keyFile = try FileKey.create(at: directory + "/app.key")
            let keyring = SecretKeyring(resolver: StandardKeyResolver(environment: [:]))
            _ = try await store.createConfig(config, settings: ConfigSettings(encryption: try await make(keyring, keyFile.name, config)))
            secrets = ConfigSecrets(store: store, config: config, keyring: keyring)
        }

        /// A new config made as discfg makes them now.
        static func current() async throws -> Fixture {
            try await Fixture { keyring, name, config in try await keyring.newEncryption(keyName: name, config: config) }
        }

        func cleanUp() { try? FileManager.default.removeItem(atPath: directory) }
    }

    @Test("history, delete, the old sealed value written back until its version matches: the reader refuses it, naming the key")
    func rollbackAfterDelete() async throws {
        let fixture = try await Fixture.current()
        defer { fixture.cleanUp() }
        let key = try Key("/db/password")
        _ = try await fixture.secrets.set(key, to: Data("old".utf8), options: SetOptions())
        _ = try await fixture.secrets.set(key, to: Data("new".utf8), options: SetOptions())
        let old = try #require(try await fixture.store.get(key, in: fixture.config, atRevision: Revision(1)))
        #expect(try await SecretReader(fixture.secrets).opened(old).value == Data("old".utf8), "history opens")

        _ = try await fixture.store.delete(key, in: fixture.config, conditions: [])
        let options = SetOptions(contentType: SecretMarker.contentType)
        let replayed = try await fixture.store.set(key, to: old.value, in: fixture.config, options: options)
        #expect(replayed.item?.version == 1)
        let refused = await #expect(throws: DiscfgError.self) { try await SecretReader(fixture.secrets).revealed(try #require(replayed.item)) }
        #expect(refused?.message.contains("/db/password") == true && refused?.message.contains("rolled back") == true, "\(refused?.message ?? "")")
    }

    @Test("a new key's seal is predicted for the config's next revision; when another write lands first, it is sealed again for the real one")
    func predictedCreateRevision() async throws {
        let fixture = try await Fixture.current()
        defer { fixture.cleanUp() }
        // A store that lets another writer in just before the secret's first write.
        let racing = RacingStore(fixture.store, config: fixture.config)
        let secrets = ConfigSecrets(store: racing, config: fixture.config, keyring: fixture.secrets.keyring)
        let event = try await secrets.set(try Key("/raced"), to: Data("value".utf8), options: SetOptions(conditions: [.version(0)]))
        let item = try #require(event.item)
        #expect(item.version == 2 && item.createRevision == Revision(2), "written at 2 after the other writer's 1, sealed again as version 2")
        #expect(try await SecretReader(fixture.secrets).opened(item).value == Data("value".utf8))
        let quiet = try await fixture.secrets.set(try Key("/quiet"), to: Data("v".utf8), options: SetOptions())
        #expect(quiet.item?.version == 1, "no race: one write")
    }

    @Test("first-format values open, with one notice, until key rotate --reseal; after it, one written back is refused")
    func legacyValues() async throws {
        let legacyID = "1"
        let fixture = try await Fixture { keyring, name, config in
            var settings = try await keyring.newEncryption(keyName: name, config: config)
            // A config made before seals were bound: its data key is "1". Same key bytes.
            let key = try StandardKeyResolver(environment: [:]).key(named: name)
            let plain = try await key.unwrap(try #require(settings.dataKeys[0].wrappedBytes), context: DataKeyContext.of(config: config, dataKeyID: settings.current))
            settings.dataKeys = [WrappedDataKey(id: legacyID, wrapped: try await key.wrap(plain, context: DataKeyContext.of(config: config, dataKeyID: legacyID)))]
            settings.current = legacyID
            return settings
        }
        defer { fixture.cleanUp() }
        #expect(DataKeyIDs.acceptsLegacySeals(try #require(try await fixture.store.configInfo(fixture.config).settings.encryption)))
        let key = try Key("/db/password")
        let keyName = try #require(try await fixture.store.configInfo(fixture.config).settings.encryption?.key)
        let resolver = StandardKeyResolver(environment: [:])
        let wrapped = try #require(try await fixture.store.configInfo(fixture.config).settings.encryption?.dataKeys[0].wrappedBytes)
        let dataKey = try await resolver.key(named: keyName).unwrap(wrapped, context: DataKeyContext.of(config: fixture.config, dataKeyID: legacyID))
        let sealed = try SecretBox.sealLegacy(
            Data("legacy".utf8), contentType: nil, binding: SecretBinding(config: fixture.config, key: key, createRevision: .zero, version: 1),
            dataKeyID: legacyID, dataKey: dataKey
        )
        let written = try await fixture.store.set(key, to: sealed, in: fixture.config, options: SetOptions(contentType: SecretMarker.contentType))
        let notices = Notices()
        let reader = SecretReader(fixture.secrets) { notices.add($0) }
        #expect(try await reader.opened(try #require(written.item)).value == Data("legacy".utf8))
        _ = try await reader.opened(try #require(written.item))
        #expect(notices.all.count == 1 && notices.all[0].contains("--reseal"), "\(notices.all)")

        // What key rotate --reseal does.
        let encryption = try #require(try await fixture.store.configInfo(fixture.config).settings.encryption)
        let rotated = try await fixture.secrets.keyring.rotated(encryption, config: fixture.config, upgrading: true)
        #expect(rotated.current == "b2" && !DataKeyIDs.acceptsLegacySeals(rotated))
        _ = try await fixture.store.updateConfig(fixture.config, ConfigSettingsPatch(encryption: rotated))
        let (resealed, left) = try await fixture.secrets.resealAll()
        #expect(resealed == 1 && left == 0)
        let upgraded = try #require(try await fixture.store.get(key, in: fixture.config))
        #expect(try SecretBox.header(of: upgraded.value).isLegacy == false)
        #expect(try await SecretReader(fixture.secrets).opened(upgraded).value == Data("legacy".utf8))

        // The first-format value written back over it: refused now, whatever its version.
        let replayed = try await fixture.store.set(key, to: sealed, in: fixture.config, options: SetOptions(contentType: SecretMarker.contentType))
        _ = try await fixture.store.delete(key, in: fixture.config, conditions: [])
        let again = try await fixture.store.set(key, to: sealed, in: fixture.config, options: SetOptions(contentType: SecretMarker.contentType))
        for item in [replayed.item, again.item].compactMap(\.self) {
            let refused = await #expect(throws: DiscfgError.self) { try await SecretReader(fixture.secrets).opened(item) }
            #expect(refused?.message.contains("first format") == true && refused?.message.contains("/db/password") == true)
        }
        // A rotation without --reseal keeps the config as it is.
        #expect(DataKeyIDs.next(after: encryption, bound: false) == "2")
    }
}

/// Notices a reader gave, in order.
final class Notices: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ text: String) { list.withLock { $0.append(text) } }
    var all: [String] { list.withLock { $0 } }
}

/// A real store with one interruption: another writer's change lands right before the
/// first set of a key that does not exist yet, as a concurrent writer's would.
final class RacingStore: ForwardingStore {
    private let base: any ConfigStore
    var forwardee: any ConfigStore { base }
    private let config: ConfigName
    private let raced = Mutex(false)

    init(_ base: any ConfigStore, config: ConfigName) {
        self.base = base
        self.config = config
    }

    func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        let first = raced.withLock { done in defer { done = true }; return !done }
        if first { _ = try await base.set(try Key("/other-writer"), to: Data("x".utf8), in: config, options: SetOptions()) }
        return try await base.set(key, to: value, in: config, options: options)
    }
}
