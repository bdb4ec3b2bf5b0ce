import DiscfgCore
import Foundation

/// An import's options: a dry run that writes nothing, a revision the change is bound
/// to, a replace under a prefix, and schemas that a replace leaves unless told.
public struct ImportOptionChecks: Sendable {
    let conformance: StoreConformance

    static func prepare(_ store: any ConfigStore) async throws -> ConfigName {
        let config = try await store.makeConfig()
        try await store.set("/app/a", "1", in: config)
        try await store.set("/app/b", #""bee""#, in: config, options: SetOptions(contentType: "application/json"))
        try await store.set("/other", "o", in: config)
        _ = try await store.setSchema(SchemaTarget("/app/b"), to: Data(text: #"{"type": "string"}"#), in: config, force: false)
        return config
    }

    static func snapshot() throws -> ConfigSnapshot {
        ConfigSnapshot(items: [
            ConfigSnapshot.Entry(key: try Key("/app/a"), value: Data("10".utf8)),
            ConfigSnapshot.Entry(key: try Key("/app/c"), value: Data("3".utf8)),
        ])
    }

    public func aDryRunAnswersTheChangeAndWritesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let before = try await store.observableState(of: config)
            let plan = try await store.importSnapshot(try Self.snapshot(), into: config, options: ImportOptions(replace: true, dryRun: true))
            try await expectEqual(store.observableState(of: config), before, "a dry run changed the config")
            expectEqual(plan.revision, before.info.revision.next)
            expectEqual(plan.events.map(\.kind), [.delete, .delete, .put, .put])
            expectEqual(plan.events.map(\.key.path), ["/app/b", "/other", "/app/a", "/app/c"])

            let applied = try await store.importSnapshot(try Self.snapshot(), into: config, options: ImportOptions(replace: true))
            expectEqual(applied.revision, plan.revision)
            expectEqual(applied.events.map(\.key), plan.events.map(\.key))
            expectEqual(applied.events.map(\.item), plan.events.map(\.item), "the plan's items are the change's")

            // A dry run that the change's rules refuse is refused the same way.
            let broken = ConfigSnapshot(items: [ConfigSnapshot.Entry(key: try Key("/app/b"), value: Data("[]".utf8), contentType: "application/json")])
            _ = try await store.setSchema(SchemaTarget("/app/b"), to: Data(text: #"{"type": "string"}"#), in: config, force: false)
            let state = try await store.observableState(of: config)
            try await expectError(.schemaViolation) { try await store.importSnapshot(broken, into: config, options: ImportOptions(dryRun: true)) }
            try await expectEqual(store.observableState(of: config), state)
        }
    }

    public func ifRevisionAppliesOnlyAtThatRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let before = try await store.observableState(of: config)
            let at = before.info.revision
            try await expectError(.conditionFailed, mentioning: ["revision \(at)"]) {
                try await store.importSnapshot(try Self.snapshot(), into: config, options: ImportOptions(ifRevision: at.previous))
            }
            try await expectError(.conditionFailed) {
                try await store.importSnapshot(try Self.snapshot(), into: config, options: ImportOptions(ifRevision: Revision(UInt64(Int64.max))))
            }
            try await expectEqual(store.observableState(of: config), before, "a refused change changed the config")
            let result = try await store.importSnapshot(try Self.snapshot(), into: config, options: ImportOptions(ifRevision: at))
            expectEqual(result.revision, at.next)
        }
    }

    public func aReplaceUnderAPrefixDeletesOnlyThere() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let result = try await store.importSnapshot(try Self.snapshot(), into: config, options: ImportOptions(replace: true, prefix: KeyPrefix("/app/")))
            expectEqual(result.events.map(\.key.path), ["/app/b", "/app/a", "/app/c"])
            let left = try await store.list(in: config, ListQuery(recursive: true)).items.map(\.key.path).filter { !$0.hasPrefix("/.discfg/") }
            expectEqual(left, ["/app/a", "/app/c", "/other"])

            let before = try await store.observableState(of: config)
            let outside = ConfigSnapshot(items: [ConfigSnapshot.Entry(key: try Key("/elsewhere"), value: Data("x".utf8))])
            try await expectError(.invalidArgument, mentioning: ["/elsewhere", "/app/"]) {
                try await store.importSnapshot(outside, into: config, options: ImportOptions(replace: true, prefix: KeyPrefix("/app/")))
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func aReplaceKeepsSchemasUnlessToldOtherwise() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            _ = try await store.importSnapshot(try Self.snapshot(), into: config, options: ImportOptions(replace: true))
            try await expectEqual(store.schemas(in: config).map(\.target), [try SchemaTarget("/app/b")], "a plain replace removed a schema")

            let result = try await store.importSnapshot(try Self.snapshot(), into: config, options: ImportOptions(replace: true, replaceSchemas: true))
            expectEqual(result.events.map(\.kind), [.delete])
            try await expectEmpty(store.schemas(in: config), "a replace of schemas kept one")
        }
    }
}

extension StoreConformance {
    /// The checks of an import's options.
    public var importOptions: ImportOptionChecks { ImportOptionChecks(conformance: self) }
}
