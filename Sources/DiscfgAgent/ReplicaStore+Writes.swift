import DiscfgCore
import Foundation
import DiscfgJSON

/// Every change is refused with `readOnly`, naming the store to write to.
extension ReplicaStore {
    public func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo { throw readOnly("creating config \"\(name)\"") }
    public func deleteConfig(_ name: ConfigName) async throws { throw readOnly("deleting config \"\(name)\"") }
    public func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo { throw readOnly("updating config \"\(name)\"") }
    public func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event { throw readOnly("setting \(key)") }
    public func patch(_ key: Key, _ patch: ValuePatch, in config: ConfigName, conditions: [Condition]) async throws -> Event { throw readOnly("patching \(key)") }
    public func putDocument(_ document: JSONValue, under prefix: KeyPrefix, in config: ConfigName, replace: Bool) async throws -> ImportResult {
        throw readOnly("writing a document under \(prefix)")
    }
    public func setSchema(_ target: SchemaTarget, to schema: Data?, in config: ConfigName, force: Bool) async throws -> SchemaChange { throw readOnly("setting a schema") }
    public func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event { throw readOnly("deleting \(key)") }
    public func deletePrefix(_ prefix: KeyPrefix, in config: ConfigName) async throws -> [Event] { throw readOnly("deleting \(prefix)") }
    public func compact(_ config: ConfigName, through revision: Revision) async throws -> ConfigInfo { throw readOnly("compacting config \"\(config)\"") }
    public func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult { throw readOnly("a transaction") }
    public func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, replace: Bool) async throws -> ImportResult { throw readOnly("an import") }
}
