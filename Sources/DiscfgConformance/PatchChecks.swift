import DiscfgCore
import Foundation

/// Patches of JSON values (RFC 7386 merge patches, RFC 6902 JSON patches): applied inside
/// the store's change transaction, keeping the key's content type and TTL, all or nothing.
public struct PatchChecks: Sendable {
    let conformance: StoreConformance

    private func patch(_ mediaType: String, _ body: String) throws -> ValuePatch {
        try ValuePatch(body: Data(text: body), mediaType: mediaType)
    }

    public func aMergePatchChangesMembersAndKeepsTypeAndTTL() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let key = try Key("/app/settings")
            let original = try await store.set(
                "/app/settings", #"{"db": {"host": "db1", "port": 5432}, "debug": true, "name": "app"}"#,
                in: config, options: SetOptions(ttlSeconds: 600, contentType: "application/json")
            )
            let event = try await store.patch(key, patch(ValuePatch.mergeMediaType, #"{"db": {"port": 6432}, "debug": null, "tags": ["a"]}"#), in: config, conditions: [])
            let expected = try json(#"{"db": {"host": "db1", "port": 6432}, "name": "app", "tags": ["a"]}"#)
            expectEqual(event.kind, .put)
            expectEqual(event.revision, 2)
            expectEqual(event.item?.json, expected)
            expectEqual(event.item?.version, 2)
            expectEqual(event.item?.createRevision, 1)
            expectEqual(event.item?.contentType, "application/json")
            expectEqual(event.item?.expiresAt, original.item?.expiresAt)
            expectNotNil(event.item?.expiresAt, "the TTL is kept")
            expectEqual(event.prevItem?.value, original.item?.value)
            let stored = try await require(store.get(key, in: config))
            expectEqual(stored.json, expected)
            expectEqual(stored.contentType, "application/json")
            expectEqual(stored.expiresAt, original.item?.expiresAt)
            try await expectEqual(store.revision(of: config), 2)
            try await expectEqual(store.fullHistory(of: key, in: config).map(\.revision), [2, 1])
        }
    }

    public func aJSONPatchAppliesEveryOperationInOrder() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let key = try Key("/app/settings")
            try await store.set("/app/settings", #"{"a": 1, "list": [1, 2], "obj": {"x": "y", "z": 0}}"#, in: config, options: SetOptions(contentType: "application/vnd.x+json"))
            let operations = """
                [{"op": "test", "path": "/a", "value": 1},
                 {"op": "add", "path": "/list/-", "value": 3},
                 {"op": "remove", "path": "/obj/z"},
                 {"op": "replace", "path": "/a", "value": 2},
                 {"op": "move", "from": "/list/0", "path": "/first"},
                 {"op": "copy", "from": "/obj", "path": "/copied"},
                 {"op": "test", "path": "/list", "value": [2, 3]}]
                """
            let event = try await store.patch(key, patch(ValuePatch.jsonPatchMediaType, operations), in: config, conditions: [])
            let expected = try json(#"{"a": 2, "list": [2, 3], "obj": {"x": "y"}, "first": 1, "copied": {"x": "y"}}"#)
            expectEqual(event.item?.json, expected)
            expectEqual(event.item?.contentType, "application/vnd.x+json")
            expectNil(event.item?.expiresAt)
            try await expectEqual(store.get(key, in: config)?.json, expected)
            // A key without a content type whose text is JSON can be patched too.
            try await store.set("/plain", #"{"n": 1}"#, in: config)
            let plain = try await store.patch(Key("/plain"), patch(ValuePatch.mergeMediaType, #"{"n": 2}"#), in: config, conditions: [])
            expectEqual(plain.item?.json, try json(#"{"n": 2}"#))
            expectNil(plain.item?.contentType)
        }
    }

    /// The arguments ``aPatchThatDoesNotApplyChangesNothing(patch:)`` is checked with: a
    /// failing `test`, a path that does not exist, a member of a number.
    public static let aPatchThatDoesNotApplyChangesNothingArguments = [
        #"[{"op": "replace", "path": "/a", "value": 5}, {"op": "test", "path": "/a", "value": 1}]"#,
        #"[{"op": "remove", "path": "/missing"}]"#,
        #"[{"op": "add", "path": "/a/b", "value": 1}]"#,
        #"[{"op": "move", "from": "/nowhere", "path": "/b"}]"#,
    ]

    public func aPatchThatDoesNotApplyChangesNothing(patch operations: String) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", #"{"a": 1}"#, in: config, options: SetOptions(contentType: "application/json"))
            let before = try await store.observableState(of: config)
            try await expectError(.patchFailed, mentioning: ["/k"]) {
                try await store.patch(Key("/k"), patch(ValuePatch.jsonPatchMediaType, operations), in: config, conditions: [])
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func aPatchOfAnAbsentKeyIsKeyNotFound() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/expiring", "{}", in: config, options: SetOptions(ttlSeconds: 1, contentType: "application/json"))
            clock.advance(seconds: 2)
            try await store.set("/deleted", "{}", in: config, options: SetOptions(contentType: "application/json"))
            _ = try await store.delete(Key("/deleted"), in: config, conditions: [])
            _ = try await store.sweepExpired()
            let before = try await store.observableState(of: config)
            for path in ["/never", "/expiring", "/deleted"] {
                try await expectError(.keyNotFound, path) {
                    try await store.patch(Key(path), patch(ValuePatch.mergeMediaType, #"{"a": 1}"#), in: config, conditions: [])
                }
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func aPatchOfAValueThatIsNotJSONIsPatchFailed() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            // Valid JSON text, but its content type says it is something else.
            try await store.set("/typed", #"{"a": 1}"#, in: config, options: SetOptions(contentType: "text/plain"))
            try await store.set("/text", "hello", in: config)
            _ = try await store.set(Key("/binary"), to: Data([0xFF, 0xFE]), in: config, options: SetOptions(contentType: "application/octet-stream"))
            let before = try await store.observableState(of: config)
            for path in ["/typed", "/text", "/binary"] {
                try await expectError(.patchFailed, path, mentioning: [path]) {
                    try await store.patch(Key(path), patch(ValuePatch.mergeMediaType, #"{"a": 2}"#), in: config, conditions: [])
                }
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func aPatchWhoseConditionsFailReturnsTheCurrentItemAndChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let key = try Key("/k")
            try await store.set("/other", "x", in: config)
            try await store.set("/k", #"{"n": 1}"#, in: config, options: SetOptions(contentType: "application/json"))
            let current = try await require(store.get(key, in: config))
            let before = try await store.observableState(of: config)
            let merge = try patch(ValuePatch.mergeMediaType, #"{"n": 2}"#)
            for condition in [Condition.version(2), .modRevision(1), .version(0)] {
                let error = try await expectError(.conditionFailed, "\(condition)") {
                    try await store.patch(key, merge, in: config, conditions: [condition])
                }
                expectEqual(error.currentItem, current, "\(condition)")
            }
            try await expectEqual(store.observableState(of: config), before)
            let event = try await store.patch(key, merge, in: config, conditions: [.version(1), .modRevision(2)])
            expectEqual(event.item?.json, try json(#"{"n": 2}"#))
            expectEqual(event.revision, 3)
        }
    }

    public func aTransactionsPatchAndPutShareOneRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let settings = try Key("/settings"), marker = try Key("/marker")
            try await store.set("/settings", #"{"v": 1}"#, in: config, options: SetOptions(contentType: "application/json"))
            let result = try await store.transact(Transaction(
                compares: [Comparison(.key(settings), .equal, .version(1))],
                success: [.patch(settings, try patch(ValuePatch.mergeMediaType, #"{"v": 2, "w": true}"#)), .put(marker, Data(text: "patched"))]
            ), in: config)
            expect(result.succeeded, "the transaction ran its failure branch")
            expectEqual(result.revision, 2)
            expectEqual(result.events.map(\.key.path), ["/settings", "/marker"])
            expectEqual(result.events.map(\.revision), [2, 2])
            guard result.responses.count == 2, case .put(let patched) = result.responses[0] else {
                fail("responses do not match the operations: \(result.responses)")
                return
            }
            expectEqual(patched.item?.json, try json(#"{"v": 2, "w": true}"#))
            expectEqual(patched.item?.contentType, "application/json")
            expectEqual(patched.prevItem?.json, try json(#"{"v": 1}"#))
            // A patch that does not apply refuses the whole transaction.
            let before = try await store.observableState(of: config)
            try await expectError(.patchFailed) {
                try await store.transact(Transaction(success: [
                    .put(marker, Data(text: "again")),
                    .patch(settings, try patch(ValuePatch.jsonPatchMediaType, #"[{"op": "test", "path": "/v", "value": 1}]"#)),
                ]), in: config)
            }
            try await expectError(.keyNotFound) {
                try await store.transact(Transaction(success: [.put(marker, Data(text: "again")), .patch(Key("/absent"), try patch(ValuePatch.mergeMediaType, "{}"))]), in: config)
            }
            try await expectError(.invalidArgument, mentioning: ["/settings"]) {
                try await store.transact(Transaction(success: [.put(settings, Data(text: "{}")), .patch(settings, try patch(ValuePatch.mergeMediaType, "{}"))]), in: config)
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    static let patchers = 4
    static let patchesPerPatcher = 10

    /// Patchers add distinct members to one value at once: each patch reads the value inside
    /// the store's change, so none is lost.
    public func concurrentMergePatchesLoseNoMember() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let key = try Key("/shared")
            try await store.set("/shared", #"{"start": true}"#, in: config, options: SetOptions(contentType: "application/json"))
            let merge = ValuePatch.mergeMediaType
            try await withThrowingTaskGroup(of: Void.self) { group in
                for patcher in 0..<Self.patchers {
                    group.addTask {
                        for round in 0..<Self.patchesPerPatcher {
                            _ = try await store.patch(key, patch(merge, #"{"p\#(patcher)-\#(round)": \#(round)}"#), in: config, conditions: [])
                            await Task.yield()
                        }
                    }
                }
                try await group.waitForAll()
            }
            let total = Self.patchers * Self.patchesPerPatcher
            let item = try await require(store.get(key, in: config))
            guard case .object(let members)? = item.json else {
                fail("the value is not a JSON object: \(String(reflecting: item.text))")
                return
            }
            let expected = ["start"] + (0..<Self.patchers).flatMap { patcher in (0..<Self.patchesPerPatcher).map { "p\(patcher)-\($0)" } }
            expectEqual(Set(members.keys), Set(expected), "members lost")
            expectEqual(members.count, total + 1)
            expectEqual(item.version, UInt64(total + 1))
            try await expectEqual(store.revision(of: config), Revision(UInt64(total + 1)))
        }
    }
}

extension StoreConformance {
    /// The checks of patches.
    public var patch: PatchChecks { PatchChecks(conformance: self) }
}
