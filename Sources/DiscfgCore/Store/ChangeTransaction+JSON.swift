import Foundation
import DiscfgJSON

extension ChangeTransaction {
    /// Patches the live value at `key` at `revision`, keeping its content type and TTL;
    /// returns the change and the JSON it wrote.
    /// - Throws: `keyNotFound` when it is absent, `patchFailed` when the patch does not apply.
    mutating func recordPatch(_ key: Key, _ patch: ValuePatch, at revision: Revision) throws -> (event: Event, value: JSONValue) {
        guard let current = try storedItem(key), !current.isExpired(at: now) else { throw DiscfgError.keyNotFound(key, in: config) }
        let hasSchema = try storedItem(SchemaTarget.key(key).storageKey).map { !$0.isExpired(at: now) } ?? false
        let patched = try patch.apply(to: current, hasSchema: hasSchema)
        try Limits.validateValue(patched.bytes)
        let event = try recordPut(key, patched.bytes, contentType: current.contentType, expiresAt: current.expiresAt, over: current, at: revision)
        return (event, patched.value)
    }

    /// Writes `document` as the keys under `prefix` at one new revision: only keys whose
    /// value changes, and with `replace` deletes of keys the document lacks
    /// (see ``KeyDocument``).
    public mutating func putDocument(_ document: JSONValue, under prefix: KeyPrefix, replace: Bool) throws -> ImportResult {
        _ = try expireDue()
        let current = try storedItems(under: prefix).filter { !$0.isExpired(at: now) }
        let (changes, unchanged) = try KeyDocument.changes(document, under: prefix, current: current, replace: replace)
        guard changes.count <= Limits.maxTransactionChanges else {
            throw DiscfgError(
                .tooLarge,
                "this document changes \(changes.count) keys under \(prefix); one change holds at most \(Limits.maxTransactionChanges), so nothing was written: apply it to narrower prefixes",
                field: "document"
            )
        }
        var events: [Event] = []
        if !changes.isEmpty {
            let revision = try currentRevision().successor()
            for change in changes {
                switch change {
                case .put(let key, let value, let contentType, let over):
                    try Limits.validateValue(value)
                    events.append(try recordPut(key, value, contentType: contentType, expiresAt: over?.expiresAt, over: over, at: revision))
                case .delete(let item):
                    events.append(try recordRemoval(of: item, at: revision))
                }
            }
        }
        try enforce(events)
        return ImportResult(events: events, unchanged: unchanged, revision: try currentRevision())
    }

    /// Attaches `schema` to `target` (or removes its schema, for nil).
    ///
    /// Attaching checks what the schema covers as it is now and refuses, naming each
    /// violation, when anything breaks it; with `force` it attaches anyway and returns the
    /// violations. Removing an absent schema throws `keyNotFound` naming the target.
    public mutating func setSchema(_ target: SchemaTarget, to schema: Data?, force: Bool) throws -> SchemaChange {
        _ = try expireDue()
        let storageKey = target.storageKey
        let current = try storedItem(storageKey)
        guard let schema else {
            guard let current else {
                throw DiscfgError(.keyNotFound, "\(target) of config \"\(config)\" has no schema", field: "key")
            }
            let event = try recordRemoval(of: current, at: try currentRevision().successor())
            return SchemaChange(event: event, violations: [])
        }
        try Limits.validateValue(schema)
        _ = try SchemaBook.validator(schema, for: target)
        let event = try recordPut(storageKey, schema, contentType: JSONContent.mediaType, expiresAt: nil, over: current, at: try currentRevision().successor())
        try enforce([event], forcing: force ? storageKey : nil)
        let violations = force ? try violations([target], schemas: try schemas()) : []
        return SchemaChange(event: event, violations: violations)
    }
}
