import DiscfgCore
import DiscfgJSON
import Foundation

/// A prefix as one JSON document (``KeyDocument``): read now or at a past revision, and
/// written back as one change at one revision.
public struct DocumentChecks: Sendable {
    let conformance: StoreConformance

    public func aDocumentNestsKeysAndEmbedsTheirValues() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/app/db/host", "db1", in: config)
            try await store.set("/app/db/port", "5432", in: config, options: SetOptions(contentType: "application/json"))
            try await store.set("/app/flags", #"{"a": [true, null]}"#, in: config, options: SetOptions(contentType: "application/vnd.x+json"))
            try await store.set("/app/note", "5432", in: config, options: SetOptions(contentType: "text/plain"))
            _ = try await store.set(Key("/app/bin"), to: Data([0xFF, 0x00, 0xFE]), in: config, options: SetOptions(contentType: "application/octet-stream"))
            try await store.set("/other", "x", in: config)
            _ = try await store.setSchema(SchemaTarget("/app/"), to: Data(text: #"{"type": "object"}"#), in: config, force: false)
            let app = try json(#"{"bin": {"$base64": "/wD+"}, "db": {"host": "db1", "port": 5432}, "flags": {"a": [true, null]}, "note": "5432"}"#)
            let read = try await store.document(under: KeyPrefix("/app/"), in: config)
            expectEqual(read.document, app)
            expectEqual(read.revision, 7)
            let deeper = try await store.document(under: KeyPrefix("/app/db/"), in: config)
            expectEqual(deeper.document, try json(#"{"host": "db1", "port": 5432}"#))
            // The root's document leaves out discfg's own records (the schema just attached).
            let root = try await store.document(under: .root, in: config)
            expectEqual(root.document, .object(JSONObject([("app", app), ("other", "x")])))
            let empty = try await store.document(under: KeyPrefix("/nothing/"), in: config)
            expectEqual(empty.document, .object(JSONObject()))
        }
    }

    public func aKeyThatIsAlsoADirectoryIsNotOneDocument() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/app/db", "flat", in: config)
            try await store.set("/app/db/host", "db1", in: config)
            try await expectError(.notRepresentable, mentioning: ["/app/db"]) { try await store.document(under: KeyPrefix("/app/"), in: config) }
            try await expectError(.notRepresentable, mentioning: ["/app/db"]) { try await store.document(under: .root, in: config) }
            // Below the clash, the keys are one document again.
            try await expectEqual(store.document(under: KeyPrefix("/app/db/"), in: config).document, try json(#"{"host": "db1"}"#))
        }
    }

    public func aDocumentAtAPastRevisionIsTheKeysAsTheyWereThen() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/app/a", "1", in: config, options: SetOptions(contentType: "application/json")) // 1
            try await store.set("/app/b", "old", in: config) // 2
            try await store.set("/app/b", "new", in: config) // 3
            _ = try await store.delete(Key("/app/a"), in: config, conditions: []) // 4
            try await store.set("/app/c/d", "added", in: config) // 5
            let then = try await store.document(under: KeyPrefix("/app/"), in: config, atRevision: 2)
            expectEqual(then.document, try json(#"{"a": 1, "b": "old"}"#))
            expectEqual(then.revision, 2)
            let now = try await store.document(under: KeyPrefix("/app/"), in: config, atRevision: 5)
            expectEqual(now.document, try json(#"{"b": "new", "c": {"d": "added"}}"#))
            try await expectEqual(store.document(under: KeyPrefix("/app/"), in: config).document, now.document)
            try await expectError(.invalidArgument) { try await store.document(under: KeyPrefix("/app/"), in: config, atRevision: 6) }
        }
    }

    public func putDocumentWritesOnlyChangedKeysAtOneRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/app/db/host", "db1", in: config) // 1
            // JSON equal to the document's member, though not byte for byte.
            try await store.set("/app/db/limits", #"{ "n" : 1.0 }"#, in: config, options: SetOptions(contentType: "application/json")) // 2
            try await store.set("/app/name", "x", in: config) // 3
            try await store.set("/other", "o", in: config) // 4
            let document = try json(#"{"db": {"host": "db2", "limits": {"n": 1}}, "name": "x", "flag": true, "new": {"deep": [1]}}"#)
            let result = try await store.putDocument(document, under: KeyPrefix("/app/"), in: config, replace: false)
            expectEqual(result.events.map(\.key.path), ["/app/db/host", "/app/flag", "/app/new/deep"])
            expectEqual(result.events.map(\.kind), [.put, .put, .put])
            expectEqual(result.events.map(\.revision), [5, 5, 5])
            expectEqual(result.unchanged, 2)
            expectEqual(result.revision, 5)
            try await expectEqual(store.revision(of: config), 5)
            let items = try await store.list(in: config, ListQuery()).items
            expectEqual(items.map(\.key.path), ["/app/db/host", "/app/db/limits", "/app/flag", "/app/name", "/app/new/deep", "/other"])
            expectEqual(items.map(\.text), ["db2", #"{ "n" : 1.0 }"#, "true", "x", "[1]", "o"])
            expectEqual(items.map(\.contentType), [nil, "application/json", "application/json", nil, "application/json", nil])
            expectEqual(items.map(\.modRevision), [5, 2, 5, 3, 5, 4])
            try await expectEqual(store.document(under: KeyPrefix("/app/"), in: config).document, document)
        }
    }

    public func putDocumentWithReplaceDeletesTheKeysItLacks() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/app/a", "1", in: config) // 1
            try await store.set("/app/b/c", "2", in: config) // 2
            try await store.set("/app/b/d", "3", in: config) // 3
            try await store.set("/appx", "4", in: config) // 4
            _ = try await store.setSchema(SchemaTarget("/"), to: Data(text: #"{"type": "object"}"#), in: config, force: false) // 5
            let result = try await store.putDocument(try json(#"{"a": "1", "e": "5"}"#), under: KeyPrefix("/app/"), in: config, replace: true)
            expectEqual(result.events.map(\.key.path), ["/app/b/c", "/app/b/d", "/app/e"])
            expectEqual(result.events.map(\.kind), [.delete, .delete, .put])
            expectEqual(result.events.map(\.revision), [6, 6, 6])
            expectEqual(result.unchanged, 1)
            try await expectEqual(store.list(in: config, ListQuery()).items.map(\.key.path), ["/.discfg/schema/%2F", "/app/a", "/app/e", "/appx"])
            // Replacing the root's document leaves discfg's own records (schemas) alone.
            let root = try await store.putDocument(try json(#"{"app": {"a": "1"}}"#), under: .root, in: config, replace: true)
            expectEqual(root.events.map(\.key.path), ["/app/e", "/appx"])
            expectEqual(root.events.map(\.revision), [7, 7])
            try await expectEqual(store.schemas(in: config).map(\.target), [SchemaTarget("/")])
            try await expectEqual(store.list(in: config, ListQuery()).items.map(\.key.path), ["/.discfg/schema/%2F", "/app/a"])
        }
    }

    public func aDocumentThatChangesNothingKeepsTheRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/app/a", "text", in: config)
            try await store.set("/app/b/c", "[1, 2]", in: config, options: SetOptions(contentType: "application/json"))
            _ = try await store.set(Key("/app/bin"), to: Data([0x00, 0xFF]), in: config)
            let current = try await store.document(under: KeyPrefix("/app/"), in: config).document
            let before = try await store.observableState(of: config)
            for replace in [false, true] {
                let result = try await store.putDocument(current, under: KeyPrefix("/app/"), in: config, replace: replace)
                expectEmpty(result.events)
                expectEqual(result.unchanged, 3)
                expectEqual(result.revision, 3)
            }
            let partial = try await store.putDocument(try json(#"{"a": "text"}"#), under: KeyPrefix("/app/"), in: config, replace: false)
            expectEmpty(partial.events)
            expectEqual(partial.unchanged, 1)
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func anInvalidDocumentChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/app/db/host", "db1", in: config)
            let before = try await store.observableState(of: config)
            let app = try KeyPrefix("/app/")
            // A new key where a directory is: refused with the path, unless replace deletes the directory.
            try await expectError(.invalidArgument, mentioning: ["/app/db"]) {
                try await store.putDocument(try json(#"{"db": "flat", "x": "1"}"#), under: app, in: config, replace: false)
            }
            try await expectError(.invalidArgument, mentioning: ["a/b"]) {
                try await store.putDocument(try json(#"{"x": "1", "a/b": "2"}"#), under: app, in: config, replace: false)
            }
            try await expectError(.invalidArgument, mentioning: ["/.discfg"]) {
                try await store.putDocument(try json(#"{".discfg": {"schema": {"x": "{}"}}}"#), under: .root, in: config, replace: false)
            }
            try await expectError(.invalidArgument) { try await store.putDocument(try json("[1]"), under: app, in: config, replace: false) }
            try await expectError(.invalidArgument) { try await store.putDocument(try json(#"{"bin": {"$base64": "not base64!"}}"#), under: app, in: config, replace: false) }
            try await expectEqual(store.observableState(of: config), before)
            let replaced = try await store.putDocument(try json(#"{"db": "flat"}"#), under: app, in: config, replace: true)
            expectEqual(replaced.events.map(\.key.path), ["/app/db", "/app/db/host"])
            expectEqual(replaced.events.map(\.kind), [.put, .delete])
        }
    }
}

extension StoreConformance {
    /// The checks of prefix documents.
    public var document: DocumentChecks { DocumentChecks(conformance: self) }
}
