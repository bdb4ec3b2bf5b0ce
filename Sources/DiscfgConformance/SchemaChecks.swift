import DiscfgCore
import Foundation

/// JSON Schemas on a key's value or a prefix's document: every change is checked before it
/// commits, and one that breaks a schema changes nothing. Schemas are keys of their config
/// (under `/.discfg/schema/`): they have history and travel with an export.
public struct SchemaChecks: Sendable {
    let conformance: StoreConformance

    static let port = #"{"type": "integer", "maximum": 65535}"#
    static let settings = #"{"type": "object", "properties": {"port": {"type": "integer", "maximum": 65535}}}"#
    static let app = """
        {"type": "object", "required": ["name"],
         "properties": {"db": {"type": "object", "properties": {
             "port": {"type": "integer"},
             "opts": {"type": "object", "properties": {"retries": {"maximum": 5}}}}}}}
        """

    private func attach(_ schema: String, to target: String, in config: ConfigName, of store: any ConfigStore, force: Bool = false) async throws -> SchemaChange {
        try await store.setSchema(SchemaTarget(target), to: Data(text: schema), in: config, force: force)
    }

    /// Expects `body` to be refused for breaking a schema, with exactly the violations
    /// `expected` (each `KEY#POINTER keyword`), each with a message, the first named in
    /// the error's message.
    private func expectRefusal<T>(
        _ expected: [String], _ comment: String, fileID: String = #fileID, line: Int = #line, _ body: () async throws -> T
    ) async throws {
        let error = try await expectError(.schemaViolation, comment, fileID: fileID, line: line, body)
        expectEqual(Self.placed(error.violations), expected.sorted(), comment, fileID: fileID, line: line)
        expect(error.violations.allSatisfy { !$0.message.isEmpty }, "\(comment): a violation without a message: \(error.violations)", fileID: fileID, line: line)
        if let first = error.violations.first {
            expect(error.message.contains(first.key), "\(comment): the message does not name \(first.key): \(error.message)", fileID: fileID, line: line)
        }
    }

    /// Each violation as `KEY#POINTER keyword`, sorted: what a check compares.
    static func placed(_ violations: [SchemaViolation]) -> [String] {
        violations.map { "\($0.key)#\($0.pointer) \($0.keyword)" }.sorted()
    }

    public func aKeySchemaRefusesEveryWriteThatBreaksIt() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let port = try Key("/app/port"), settings = try Key("/app/settings")
            try await store.set("/app/port", "8080", in: config) // 1
            try await store.set("/app/settings", #"{"port": 8080}"#, in: config, options: SetOptions(contentType: "application/json")) // 2
            let attached = try await attach(Self.port, to: "/app/port", in: config, of: store) // 3
            expectEqual(attached.event.kind, .put)
            expectEqual(attached.event.key, SchemaTarget.key(port).storageKey)
            expectEqual(attached.event.revision, 3)
            expectEmpty(attached.violations)
            _ = try await attach(Self.settings, to: "/app/settings", in: config, of: store) // 4
            let before = try await store.observableState(of: config)
            try await expectRefusal(["/app/port# maximum"], "set") { try await store.set("/app/port", "70000", in: config) }
            try await expectRefusal(["/app/port# maximum"], "typed set") {
                try await store.set("/app/port", "70000", in: config, options: SetOptions(contentType: "application/json"))
            }
            try await expectRefusal(["/app/port# type"], "set of a string") { try await store.set("/app/port", #""8080""#, in: config) }
            try await expectRefusal(["/app/port# maximum"], "transaction") {
                try await store.transact(Transaction(success: [.put(Key("/free"), Data(text: "1")), .put(port, Data(text: "70000"))]), in: config)
            }
            try await expectRefusal(["/app/port# maximum"], "import") {
                try await store.importSnapshot(ConfigSnapshot(items: [.init(key: Key("/free"), value: Data(text: "1")), .init(key: port, value: Data(text: "70000"))]), into: config, replace: false)
            }
            try await expectRefusal(["/app/settings#/port maximum"], "merge patch") {
                try await store.patch(settings, ValuePatch.merge(json(#"{"port": 70000}"#)), in: config, conditions: [])
            }
            try await expectRefusal(["/app/settings#/port type"], "JSON patch") {
                try await store.patch(settings, ValuePatch(jsonPatch: json(#"[{"op": "replace", "path": "/port", "value": "high"}]"#)), in: config, conditions: [])
            }
            try await expectRefusal(["/app/settings# type"], "transaction patch") {
                try await store.transact(Transaction(success: [.patch(settings, ValuePatch.merge(json("[]")))]), in: config)
            }
            try await expectEqual(store.observableState(of: config), before)
            // What meets the schema is written; deleting a key with a schema is always allowed.
            try await expectEqual(store.set("/app/port", "9090", in: config).revision, 5)
            try await expectEqual(store.patch(settings, ValuePatch.merge(json(#"{"port": 443}"#)), in: config, conditions: []).revision, 6)
            try await expectEqual(store.delete(port, in: config, conditions: []).revision, 7)
        }
    }

    public func aKeyWithASchemaHoldsJSONWhateverItsContentType() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/name", #""svc""#, in: config)
            _ = try await attach(#"{"type": "string"}"#, to: "/name", in: config, of: store)
            let before = try await store.observableState(of: config)
            try await expectRefusal(["/name# type"], "no content type") { try await store.set("/name", "not json", in: config) }
            try await expectRefusal(["/name# type"], "text/plain") {
                try await store.set("/name", "not json", in: config, options: SetOptions(contentType: "text/plain"))
            }
            try await expectError(.invalidArgument, "a JSON content type", mentioning: ["/name", "line 1"]) {
                try await store.set("/name", "not json", in: config, options: SetOptions(contentType: "application/json"))
            }
            try await expectEqual(store.observableState(of: config), before)
            try await expectEqual(store.set("/name", #""other""#, in: config, options: SetOptions(contentType: "text/plain")).item?.text, #""other""#)
        }
    }

    public func aPrefixSchemaChecksTheDocumentOfItsKeys() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let name = try Key("/app/name"), opts = try Key("/app/db/opts"), app = try KeyPrefix("/app/")
            try await store.set("/app/name", "svc", in: config)
            try await store.set("/app/db/port", "5432", in: config, options: SetOptions(contentType: "application/json"))
            try await store.set("/app/db/opts", #"{"retries": 1}"#, in: config, options: SetOptions(contentType: "application/json"))
            _ = try await attach(Self.app, to: "/app/", in: config, of: store) // 4
            let before = try await store.observableState(of: config)
            try await expectRefusal(["/app/db/port# type"], "JSON of the wrong type") {
                try await store.set("/app/db/port", #""x""#, in: config, options: SetOptions(contentType: "application/json"))
            }
            try await expectRefusal(["/app/db/port# type"], "text, a string in the document") { try await store.set("/app/db/port", "5432", in: config) }
            try await expectRefusal(["/app/db/opts#/retries maximum"], "patch") {
                try await store.patch(opts, ValuePatch.merge(json(#"{"retries": 9}"#)), in: config, conditions: [])
            }
            try await expectRefusal(["/app/# required"], "delete") { try await store.delete(name, in: config, conditions: []) }
            try await expectRefusal(["/app/# required"], "delete with a condition") { try await store.delete(name, in: config, conditions: [.version(1)]) }
            try await expectRefusal(["/app/# required"], "deletePrefix") { try await store.deletePrefix(app, in: config) }
            try await expectRefusal(["/app/# required"], "transaction delete") { try await store.transact(Transaction(success: [.delete(name)]), in: config) }
            try await expectRefusal(["/app/# required", "/app/db/opts#/retries maximum"], "transaction") {
                try await store.transact(Transaction(success: [.delete(name), .put(opts, Data(text: #"{"retries": 6}"#), contentType: "application/json")]), in: config)
            }
            try await expectRefusal(["/app/db/port# type"], "import") {
                try await store.importSnapshot(ConfigSnapshot(items: [.init(key: Key("/app/db/port"), value: Data(text: "[]"), contentType: "application/json")]), into: config, replace: false)
            }
            try await expectRefusal(["/app/db/port# type"], "document") {
                try await store.putDocument(json(#"{"db": {"port": "x"}}"#), under: app, in: config, replace: false)
            }
            try await expectRefusal(["/app/# required"], "replacing document") {
                try await store.putDocument(json(#"{"db": {"port": 1}}"#), under: app, in: config, replace: true)
            }
            try await expectEqual(store.observableState(of: config), before)
            // Keys outside the prefix, and changes that meet the schema, are written.
            try await store.set("/other/port", "x", in: config)
            try await store.set("/app/db/port", "6543", in: config, options: SetOptions(contentType: "application/json"))
            try await store.set("/app/extra", "anything", in: config)
            _ = try await store.delete(Key("/app/extra"), in: config, conditions: [])
            try await expectEqual(store.revision(of: config), 8)
        }
    }

    public func attachingASchemaThatValuesBreakIsRefusedUnlessForced() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/app/port", "70000", in: config)
            try await store.set("/app/db/port", "x", in: config)
            let before = try await store.observableState(of: config)
            try await expectRefusal(["/app/port# maximum"], "key schema") { try await attach(Self.port, to: "/app/port", in: config, of: store) }
            try await expectRefusal(["/app/# required", "/app/db/port# type"], "prefix schema") { try await attach(Self.app, to: "/app/", in: config, of: store) }
            try await expectEqual(store.observableState(of: config), before)
            try await expectEmpty(store.schemas(in: config))

            let forced = try await attach(Self.port, to: "/app/port", in: config, of: store, force: true)
            expectEqual(forced.event.revision, 3)
            expectEqual(Self.placed(forced.violations), ["/app/port# maximum"])
            let forcedPrefix = try await attach(Self.app, to: "/app/", in: config, of: store, force: true)
            expectEqual(Self.placed(forcedPrefix.violations), ["/app/# required", "/app/db/port# type"])
            try await expectEqual(store.schemas(in: config).map(\.target.path), ["/app/", "/app/port"])
            try await expectEqual(store.schemas(in: config).map(\.item.text), [Self.app, Self.port])
            // Attached, the schemas hold every later change: a change of a key they cover is
            // refused while what they cover breaks them, until one change mends it all.
            try await expectRefusal(["/app/# required", "/app/db/port# type", "/app/port# maximum"], "after force") {
                try await store.set("/app/port", "70001", in: config)
            }
            try await expectRefusal(["/app/db/port# type"], "a name alone") { try await store.set("/app/name", "svc", in: config) }
            let mended = try await store.transact(Transaction(success: [
                .put(Key("/app/name"), Data(text: "svc")), .put(Key("/app/db/port"), Data(text: "5432"), contentType: "application/json"), .put(Key("/app/port"), Data(text: "80")),
            ]), in: config)
            expectEqual(mended.revision, 5)
        }
    }

    public func removingASchemaAllowsTheWrite() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let target = try SchemaTarget("/app/port")
            try await store.set("/app/port", "80", in: config) // 1
            _ = try await attach(Self.port, to: "/app/port", in: config, of: store) // 2
            try await expectRefusal(["/app/port# maximum"], "with the schema") { try await store.set("/app/port", "70000", in: config) }
            let removed = try await store.setSchema(target, to: nil, in: config, force: false)
            expectEqual(removed.event.kind, .delete)
            expectEqual(removed.event.key, target.storageKey)
            expectEqual(removed.event.revision, 3)
            expectEqual(removed.event.prevItem?.text, Self.port)
            try await expectEmpty(store.schemas(in: config))
            try await expectEqual(store.set("/app/port", "not even JSON", in: config).revision, 4)
            try await expectError(.keyNotFound, mentioning: ["/app/port"]) { try await store.setSchema(target, to: nil, in: config, force: false) }
            try await expectEqual(store.revision(of: config), 4)
        }
    }

    /// The arguments ``anInvalidSchemaIsRefused(schema:)`` is checked with: not JSON, a
    /// keyword of the wrong type, a pattern that is not a regular expression, not a schema.
    public static let anInvalidSchemaIsRefusedArguments = ["not json", #"{"type": 5}"#, #"{"minimum": "x"}"#, #"{"pattern": "(unclosed"}"#, "[1]", #"{"type": "integer""#]

    public func anInvalidSchemaIsRefused(schema: String) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "1", in: config)
            _ = try await attach(#"{"type": "object"}"#, to: "/app/", in: config, of: store)
            let before = try await store.observableState(of: config)
            for target in ["/k", "/app/", "/"] {
                try await expectError(.invalidArgument, target, field: "schema") { try await attach(schema, to: target, in: config, of: store) }
                try await expectError(.invalidArgument, target, field: "schema") { try await attach(schema, to: target, in: config, of: store, force: true) }
            }
            // Written as its key, it is refused the same.
            try await expectError(.invalidArgument, "set of the schema's key", field: "schema") {
                try await store.set(SchemaTarget("/k").storageKey, to: Data(text: schema), in: config)
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func schemasHaveHistoryAndTravelWithAnExport() async throws {
        try await conformance.withStore { store, _ in
            let source = try await store.makeConfig("source")
            let target = try SchemaTarget("/app/port"), prefix = try SchemaTarget("/app/")
            try await store.set("/app/port", "80", in: source) // 1
            _ = try await attach(#"{"type": "integer"}"#, to: "/app/port", in: source, of: store) // 2
            _ = try await attach(Self.port, to: "/app/port", in: source, of: store) // 3
            _ = try await attach(#"{"required": ["port"]}"#, to: "/app/", in: source, of: store) // 4
            let history = try await store.fullHistory(of: target.storageKey, in: source)
            expectEqual(history.map(\.revision), [3, 2])
            expectEqual(history.map(\.item?.text), [Self.port, #"{"type": "integer"}"#])
            expectEqual(history.first?.item?.version, 2)

            let snapshot = try await store.export(source)
            expectEqual(snapshot.items.map(\.key.path), [prefix.storageKey.path, target.storageKey.path, "/app/port"])
            let copy = try await store.makeConfig("copy")
            let imported = try await store.importSnapshot(snapshot, into: copy, replace: false)
            expectEqual(imported.events.count, 3)
            let schemas = try await store.schemas(in: copy)
            expectEqual(schemas.map(\.target), [prefix, target])
            let sourceSchemas = try await store.schemas(in: source)
            expectEqual(schemas.map(\.item.value), sourceSchemas.map(\.item.value))
            // The imported schemas hold the copy's keys.
            try await expectRefusal(["/app/port# maximum"], "in the copy") { try await store.set("/app/port", "70000", in: copy) }
            try await expectRefusal(["/app/# required"], "in the copy") { try await store.delete(Key("/app/port"), in: copy, conditions: []) }
            // An import whose values break the schemas it brings is refused whole.
            var broken = snapshot
            broken.items = snapshot.items.map { $0.key.path == "/app/port" ? .init(key: $0.key, value: Data(text: "70000")) : $0 }
            let empty = try await store.makeConfig("empty")
            try await expectRefusal(["/app/port# maximum"], "import with its schemas") { try await store.importSnapshot(broken, into: empty, replace: false) }
            try await expectEqual(store.revision(of: empty), 0)
        }
    }

    /// The arguments ``discfgsOwnPrefixHoldsOnlySchemas(path:)`` is checked with.
    public static let discfgsOwnPrefixHoldsOnlySchemasArguments = ["/.discfg", "/.discfg/other", "/.discfg/schema/app/port", "/.discfg/schema/%2Fapp%ZZ", "/.discfg/tokens/x"]

    public func discfgsOwnPrefixHoldsOnlySchemas(path: String) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "1", in: config)
            let key = try Key(path)
            let before = try await store.observableState(of: config)
            try await expectError(.invalidArgument, "set", mentioning: [path]) { try await store.set(key, to: Data(text: "{}"), in: config) }
            try await expectError(.invalidArgument, "transaction", mentioning: [path]) {
                try await store.transact(Transaction(success: [.put(Key("/k"), Data(text: "2")), .put(key, Data(text: "{}"))]), in: config)
            }
            try await expectError(.invalidArgument, "import", mentioning: [path]) {
                try await store.importSnapshot(ConfigSnapshot(items: [.init(key: key, value: Data(text: "{}"))]), into: config, replace: false)
            }
            try await expectEqual(store.observableState(of: config), before)
            expectNil(SchemaTarget(storageKey: key), "\(path) names no schema")
            try expectError(.invalidArgument, "a schema on discfg's own prefix") { try SchemaTarget(path) }
        }
    }

    public func aSchemaIsRemovedOnlyAsASchema() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/app/port", "80", in: config)
            let target = try SchemaTarget("/app/port")
            _ = try await store.setSchema(target, to: Data(text: Self.port), in: config, force: false)
            let before = try await store.observableState(of: config)
            try await expectError(.invalidArgument, "delete", mentioning: ["schema rm"]) { try await store.delete(target.storageKey, in: config, conditions: []) }
            try await expectError(.invalidArgument, "delete prefix", mentioning: ["schema rm"]) { try await store.deletePrefix(KeyPrefix("/.discfg/"), in: config) }
            try await expectError(.invalidArgument, "transaction delete", mentioning: ["schema rm"]) {
                try await store.transact(Transaction(success: [.delete(target.storageKey)]), in: config)
            }
            try await expectEqual(store.observableState(of: config), before)
            // Deleting every key of the config, alone or in a transaction, leaves its schemas.
            let deleted = try await store.deletePrefix(.root, in: config)
            expectEqual(deleted.map(\.key.path), ["/app/port"])
            try await store.set("/app/port", "81", in: config)
            _ = try await store.transact(Transaction(success: [.deletePrefix(.root)]), in: config)
            try await expectEqual(store.schemas(in: config).map(\.target), [target])
            _ = try await store.setSchema(target, to: nil, in: config, force: false)
            try await expectEmpty(store.schemas(in: config))
        }
    }

    /// A key a prefix schema requires may not go by itself: a TTL or an etcd lease on it is
    /// refused when written (and a schema that would require a key that has one is refused
    /// when attached), so an expiry never has to be judged, and none leaves a config whose
    /// every later change is refused.
    public func expiryIsNeverRefusedByASchema() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            let required = #"{"required": ["name"]}"#
            try await store.set("/app/name", "svc", in: config, options: SetOptions(ttlSeconds: 5))
            try await store.set("/port", "80", in: config, options: SetOptions(ttlSeconds: 5))
            try await expectRefusal(["/app/name# required"], "attaching a schema that requires a key with a TTL") {
                try await attach(required, to: "/app/", in: config, of: store)
            }
            try await store.set("/app/name", "svc", in: config)
            _ = try await attach(required, to: "/app/", in: config, of: store)
            // A key's own schema checks its value, and does not require it: its TTL stays.
            _ = try await attach(Self.port, to: "/port", in: config, of: store)
            let before = try await store.observableState(of: config)
            try await expectRefusal(["/app/name# required"], "a TTL on a required key") {
                try await store.set("/app/name", "svc", in: config, options: SetOptions(ttlSeconds: 5))
            }
            try await expectRefusal(["/app/name# required"], "an etcd lease on a required key") {
                try await store.set("/app/name", "svc", in: config, options: SetOptions(contentType: "\(LeaseRecord.attachmentMediaType); id=7; ttl=60"))
            }
            try await expectRefusal(["/app/name# required"], "a transaction's TTL on a required key") {
                try await store.transact(Transaction(success: [.put(Key("/app/name"), Data(text: "svc"), ttlSeconds: 5)]), in: config)
            }
            try await expectRefusal(["/app/name# required"], "an import's expiry on a required key") {
                let snapshot = ConfigSnapshot(config: config, revision: Revision(1), items: [
                    ConfigSnapshot.Entry(key: try Key("/app/name"), value: Data(text: "svc2"), expiresAt: clock.now().addingTimeInterval(60)),
                ])
                return try await store.importSnapshot(snapshot, into: config, replace: false)
            }
            try await expectRefusal(["/app/# required"], "a delete") { try await store.delete(Key("/app/name"), in: config, conditions: []) }
            try await expectEqual(store.observableState(of: config), before)
            // A TTL on a key no schema requires is kept, and its expiry is never refused.
            try await store.set("/app/cache", "on", in: config, options: SetOptions(ttlSeconds: 5))
            clock.advance(seconds: 6)
            let expired = try await store.sweepExpired()
            expectEqual(expired.map(\.key.path).sorted(), ["/app/cache", "/port"])
            expectEqual(expired.map(\.kind), [.expire, .expire])
            try await expectNil(store.get(Key("/port"), in: config))
            try await store.set("/app/name", "svc2", in: config)
            try await expectEqual(store.schemas(in: config).map(\.target.path), ["/app/", "/port"])
        }
    }
}

extension StoreConformance {
    /// The checks of JSON Schemas.
    public var schema: SchemaChecks { SchemaChecks(conformance: self) }
}
