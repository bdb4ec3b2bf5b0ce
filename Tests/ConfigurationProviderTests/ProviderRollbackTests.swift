import Configuration
import DiscfgConfiguration
import DiscfgCore
import DiscfgSecrets
import DiscfgSQLite
import Foundation
import Testing

/// The provider opens secrets through the same opener as the CLI: a sealed value written
/// back by someone without the key does not open in the application either.
@Suite("Provider: a rolled-back secret")
struct ProviderRollbackTests {
    @Test("history, delete, the old sealed value put back as version 1: the provider does not start, naming the key; set again, it does")
    func rollbackAfterDelete() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-provider-rollback-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = try FileKey.create(at: directory.appendingPathComponent("app.key").path)
        let keys = StandardKeyResolver(environment: [:])
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
        let name = try ConfigName("app")
        let writer = ConfigSecrets(store: store, config: name, keyring: SecretKeyring(resolver: keys))
        _ = try await store.createConfig(name, settings: ConfigSettings(encryption: try await writer.keyring.newEncryption(keyName: keyFile.name, config: name)))
        let key = try Key("/db/password")
        let written = try await writer.set(key, to: Data("old-password".utf8), options: SetOptions())
        let first = try #require(written.item)
        _ = try await writer.set(key, to: Data("new-password".utf8), options: SetOptions())
        let before = try await DiscfgProvider(store: store, config: "app", keys: keys)
        let current = try before.value(forKey: ["db", "password"], type: .string).value?.content
        #expect(current == .string("new-password"))

        _ = try await store.delete(key, in: name, conditions: [])
        _ = try await store.set(key, to: first.value, in: name, options: SetOptions(contentType: SecretMarker.contentType))
        let refused = await #expect(throws: DiscfgError.self) { try await DiscfgProvider(store: store, config: "app", keys: keys) }
        #expect(refused?.message.contains("/db/password") == true && refused?.message.contains("rolled back") == true, "\(refused?.message ?? "")")
        #expect(refused?.message.contains("old-password") == false)

        _ = try await writer.set(key, to: Data("third".utf8), options: SetOptions())
        let after = try await DiscfgProvider(store: store, config: "app", keys: keys)
        let third = try after.value(forKey: ["db", "password"], type: .string).value?.content
        #expect(third == .string("third"))
    }
}
