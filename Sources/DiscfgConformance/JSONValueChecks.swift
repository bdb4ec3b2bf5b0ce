import DiscfgCore
import DiscfgJSON
import Foundation

/// JSON in values: a key whose content type is JSON (`application/json`, any `…/…+json`)
/// holds valid JSON, however it is written — a set, a transaction's put, an import.
public struct JSONValueChecks: Sendable {
    let conformance: StoreConformance

    /// The arguments ``invalidJSONIsRefusedWithItsLineAndColumn(contentType:)`` is checked with.
    public static let invalidJSONIsRefusedWithItsLineAndColumnArguments = ["application/json", "application/vnd.x+json", "Application/JSON; charset=utf-8"]

    /// Broken on line 3, column 8: the member's value is missing.
    static let brokenJSON = "{\n  \"a\": 1,\n  \"b\": }"
    /// What the refusal names: the key and the place.
    static let brokenJSONPlace = "line 3, column 8"

    public func invalidJSONIsRefusedWithItsLineAndColumn(contentType: String) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", #"{"a": 1}"#, in: config, options: SetOptions(contentType: contentType))
            let before = try await store.observableState(of: config)
            try await expectError(.invalidArgument, mentioning: ["/k", Self.brokenJSONPlace]) {
                try await store.set("/k", Self.brokenJSON, in: config, options: SetOptions(contentType: contentType))
            }
            try await expectError(.invalidArgument, mentioning: ["/new", "line 1, column "]) {
                try await store.set("/new", "not json", in: config, options: SetOptions(contentType: contentType))
            }
            try await expectEqual(store.observableState(of: config), before)
            // Valid JSON in any spacing is kept byte for byte.
            let spaced = "{ \"a\" : [1, 2.50, \"x\"] }\n"
            try await store.set("/k", spaced, in: config, options: SetOptions(contentType: contentType))
            try await expectEqual(store.get(Key("/k"), in: config)?.text, spaced)
        }
    }

    public func theSameBytesWithAnotherContentTypeAreKept() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/plain", Self.brokenJSON, in: config)
            try await store.set("/text", Self.brokenJSON, in: config, options: SetOptions(contentType: "text/plain"))
            try await store.set("/jsonish", Self.brokenJSON, in: config, options: SetOptions(contentType: "application/jsonl"))
            try await expectEqual(store.list(in: config, ListQuery()).items.map(\.text), Array(repeating: Self.brokenJSON, count: 3))
        }
    }

    public func aTransactionPutOfInvalidJSONChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/a", "1", in: config)
            let before = try await store.observableState(of: config)
            try await expectError(.invalidArgument, mentioning: ["/b", Self.brokenJSONPlace]) {
                try await store.transact(Transaction(success: [
                    .put(Key("/a"), Data(text: "2")),
                    .put(Key("/b"), Data(text: Self.brokenJSON), contentType: "application/json"),
                ]), in: config)
            }
            try await expectEqual(store.observableState(of: config), before)
            let fine = try await store.transact(Transaction(success: [.put(Key("/b"), Data(text: "[true]"), contentType: "application/json")]), in: config)
            expectEqual(fine.events.map(\.item?.contentType), ["application/json"])
        }
    }

    public func anImportOfInvalidJSONChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/a", "1", in: config)
            let before = try await store.observableState(of: config)
            let snapshot = try ConfigSnapshot(items: [
                .init(key: Key("/a"), value: Data(text: "2")),
                .init(key: Key("/b"), value: Data(text: Self.brokenJSON), contentType: "application/problem+json"),
            ])
            try await expectError(.invalidArgument, mentioning: ["/b", Self.brokenJSONPlace]) {
                try await store.importSnapshot(snapshot, into: config, replace: true)
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }
}

extension StoreConformance {
    /// The checks of JSON values.
    public var jsonValue: JSONValueChecks { JSONValueChecks(conformance: self) }
}

/// JSON written in a check, parsed.
func json(_ text: String) throws -> JSONValue {
    try JSONContent.parse(Data(text.utf8), key: nil)
}

extension Item {
    /// The value as JSON, or nil when it is not JSON.
    var json: JSONValue? { try? JSONParser.parse(Array(value)) }
}
