import DiscfgConformance
import DiscfgCore
import DiscfgJSON
import Foundation
import Testing

/// The keys under a prefix as one JSON object, and a document as the changes that make
/// the keys hold it: without a store.
@Suite("KeyDocument")
struct KeyDocumentTests {
    static let at = Date(milliseconds: 1_767_225_600_000)

    static func item(_ path: String, _ value: Data, _ contentType: String? = nil, revision: Revision = 1) throws -> Item {
        Item(key: try Key(path), value: value, contentType: contentType, version: 1, createRevision: revision, modRevision: revision, modifiedAt: at)
    }

    static func item(_ path: String, _ text: String, _ contentType: String? = nil) throws -> Item {
        try item(path, Data(text.utf8), contentType)
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONContent.parse(Data(text.utf8), key: nil)
    }

    @Test("members nest by path; JSON values embed, text is a string, other bytes are $base64")
    func readNestsAndEmbeds() throws {
        let items = [
            try Self.item("/app/db/port", "5432", "application/json"),
            try Self.item("/app/db/host", "db1"),
            try Self.item("/app/flags", #"{"a": [true]}"#, "application/problem+json; charset=utf-8"),
            try Self.item("/app/note", "5432", "text/plain"),
            try Self.item("/app/bin", Data([0xFF, 0x00, 0xFE]), "application/octet-stream"),
            try Self.item("/app/broken", "{not json", "application/json"),
            try Self.item("/elsewhere", "x"),
        ]
        let document = try KeyDocument.read(items, under: KeyPrefix("/app/"))
        #expect(document == (try Self.json(#"{"bin": {"$base64": "/wD+"}, "broken": "{not json", "db": {"host": "db1", "port": 5432}, "flags": {"a": [true]}, "note": "5432"}"#)))
        // Members come in key order, whatever order the items came in.
        guard case .object(let members) = document else { Issue.record("not an object: \(document)"); return }
        #expect(members.keys == ["bin", "broken", "db", "flags", "note"])
    }

    @Test("discfg's own records are left out of the root's document")
    func readLeavesOutReservedKeys() throws {
        let items = [try Self.item("/.discfg/schema/%2F", "{}", "application/json"), try Self.item("/a", "1")]
        #expect(try KeyDocument.read(items, under: .root) == Self.json(#"{"a": "1"}"#))
        #expect(try KeyDocument.read([], under: .root) == .object(JSONObject()))
    }

    @Test(arguments: [["/app/db", "/app/db/host"], ["/app/db/host", "/app/db"], ["/app/a/b/c", "/app/a/b"]])
    func aKeyThatIsAlsoADirectoryIsRefusedByPath(paths: [String]) throws {
        let items = try paths.map { try Self.item($0, "x") }
        let clash = paths.min { $0.count < $1.count }!
        try expectError(.notRepresentable, field: "document", mentioning: [clash, "/app/"]) { try KeyDocument.read(items, under: KeyPrefix("/app/")) }
    }

    @Test("a document names only the keys whose value changes, in key order, and counts the rest")
    func changesOnlyWhatDiffers() throws {
        let current = [
            try Self.item("/app/db/host", "db1"),
            try Self.item("/app/db/limits", #"{ "n" : 1.0 }"#, "application/json"),
            try Self.item("/app/name", "x", "text/plain"),
            try Self.item("/app/bin", Data([0x00, 0xFF])),
            try Self.item("/app/gone", "g"),
        ]
        let document = try Self.json(#"{"name": "x", "db": {"limits": {"n": 1}, "host": "db2"}, "bin": {"$base64": "AP8="}, "new": {"deep": [1], "text": "t"}}"#)
        let (changes, unchanged) = try KeyDocument.changes(document, under: KeyPrefix("/app/"), current: current, replace: false)
        #expect(unchanged == 3)
        #expect(changes == [
            .put(try Key("/app/db/host"), Data("db2".utf8), contentType: nil, over: current[0]),
            .put(try Key("/app/new/deep"), Data("[1]".utf8), contentType: "application/json", over: nil),
            .put(try Key("/app/new/text"), Data("t".utf8), contentType: nil, over: nil),
        ])
        let (replacing, _) = try KeyDocument.changes(document, under: KeyPrefix("/app/"), current: current, replace: true)
        #expect(replacing.count == 4)
        #expect(replacing.contains(.delete(current[4])))
    }

    @Test("a member over a text key keeps its type for a string and becomes JSON otherwise; over a JSON key it stays JSON")
    func storedContentTypes() throws {
        let current = [try Self.item("/text", "a", "text/plain"), try Self.item("/json", "1", "application/vnd.x+json")]
        let (changes, _) = try KeyDocument.changes(try Self.json(#"{"text": {"n": 2}, "json": "now a string"}"#), under: .root, current: current, replace: false)
        #expect(changes == [
            .put(try Key("/json"), Data(#""now a string""#.utf8), contentType: "application/vnd.x+json", over: current[1]),
            .put(try Key("/text"), Data(#"{"n":2}"#.utf8), contentType: "application/json", over: current[0]),
        ])
    }

    @Test("a document read and written back changes nothing")
    func roundTrip() throws {
        let current = [
            try Self.item("/app/a", "text"), try Self.item("/app/b/c", "[1, 2]", "application/json"),
            try Self.item("/app/bin", Data([0x00, 0xFF]), "application/octet-stream"), try Self.item("/app/t", "true", "text/plain"),
        ]
        let document = try KeyDocument.read(current, under: KeyPrefix("/app/"))
        for replace in [false, true] {
            let (changes, unchanged) = try KeyDocument.changes(document, under: KeyPrefix("/app/"), current: current, replace: replace)
            #expect(changes.isEmpty, "replace: \(replace)")
            #expect(unchanged == current.count)
        }
    }

    @Test(arguments: [
        (#"[1]"#, "must be a JSON object"),
        (#"{"a/b": 1}"#, "\"a/b\""),
        (#"{"": 1}"#, "one path segment"),
        (#"{"..": 1}"#, "one path segment"),
        (#"{"x": {".": 1}}"#, "under /app/x/"),
        (#"{"bin": {"$base64": "%%%"}}"#, "$base64"),
        (#"{"db": "flat"}"#, "/app/db would be both a key and a directory"),
    ])
    func invalidDocumentsAreRefused(document: String, phrase: String) throws {
        let current = [try Self.item("/app/db/host", "h")]
        try expectError(.invalidArgument, field: "document", mentioning: [phrase]) {
            try KeyDocument.changes(try Self.json(document), under: KeyPrefix("/app/"), current: current, replace: false)
        }
    }

    @Test("a document cannot write discfg's own records")
    func reservedMembersAreRefused() throws {
        try expectError(.invalidArgument, field: "document", mentioning: ["/.discfg", "reserved"]) {
            try KeyDocument.changes(try Self.json(#"{".discfg": {"schema": {"x": 1}}}"#), under: .root, current: [], replace: false)
        }
        // Replacing the root's document leaves them alone.
        let schema = try Self.item("/.discfg/schema/%2F", "{}", "application/json")
        let (changes, _) = try KeyDocument.changes(try Self.json("{}"), under: .root, current: [schema, try Self.item("/a", "1")], replace: true)
        #expect(changes.count == 1)
        #expect(changes.first.map { if case .delete(let item) = $0 { item.key.path } else { "" } } == "/a")
    }

    @Test("a document past its byte bound, of keys and values or of text, is refused, now and at a past revision; within it, read whole")
    func documentsAreBounded() async throws {
        let store = MemoryStore()
        let config = try ConfigName("bounded")
        _ = try await store.createConfig(config, settings: ConfigSettings())
        for name in ["a", "b", "c"] {
            _ = try await store.set(try Key("/app/\(name)"), to: Data(String(repeating: "x", count: 100).utf8), in: config)
        }
        let prefix = try KeyPrefix("/app/")
        // Three keys of 6 bytes of path and 100 of value each: 318 bytes; as text,
        // `{"a":"x…x","b":"x…x","c":"x…x"}`, 322 bytes.
        for revision in [nil, Revision(3)] {
            let read = try await store.document(under: prefix, in: config, atRevision: revision, maxBytes: 322)
            #expect(read.document["c"] == .string(String(repeating: "x", count: 100)))
            let text = try await store.documentText(under: prefix, in: config, atRevision: revision, maxBytes: 322).text
            #expect(text.count == 322)
            for maxBytes in [321, 317] {
                do {
                    _ = try await store.document(under: prefix, in: config, atRevision: revision, maxBytes: maxBytes)
                    Issue.record("a document past its bound of \(maxBytes) bytes was read")
                } catch let error as DiscfgError {
                    #expect(error.code == .tooLarge && error.message.contains("narrower prefix"), "\(error)")
                }
            }
        }
    }
}
