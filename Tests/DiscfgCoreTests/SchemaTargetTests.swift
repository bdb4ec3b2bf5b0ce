import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

/// Where a schema is attached, and the one key each target's schema is kept at.
@Suite("SchemaTarget")
struct SchemaTargetTests {
    @Test(arguments: [
        ("/app/port", SchemaTarget.key(try! Key("/app/port"))),
        ("app/port", .key(try! Key("/app/port"))),
        ("/app/", .prefix(try! KeyPrefix("/app/"))),
        ("/", .prefix(.root)),
        ("", .prefix(.root)),
        ("/a/b/", .prefix(try! KeyPrefix("/a/b/"))),
    ])
    func aTrailingSlashMakesAPrefix(text: String, target: SchemaTarget) throws {
        #expect(try SchemaTarget(text) == target)
    }

    @Test(arguments: [
        ("/app/port", "/.discfg/schema/%2Fapp%2Fport"),
        ("/app/", "/.discfg/schema/%2Fapp%2F"),
        ("/", "/.discfg/schema/%2F"),
        ("/100%/x", "/.discfg/schema/%2F100%25%2Fx"),
        ("/%2F", "/.discfg/schema/%2F%252F"),
        ("/caf\u{E9}/", "/.discfg/schema/%2Fcaf\u{E9}%2F"),
    ])
    func theStorageKeyIsThePathEscapedIntoOneSegment(text: String, storageKey: String) throws {
        let target = try SchemaTarget(text)
        #expect(target.storageKey.path == storageKey)
        #expect(SchemaTarget(storageKey: target.storageKey) == target, "the storage key reads back as its target")
    }

    @Test("a key and the prefix of the same name keep their schemas apart")
    func keyAndPrefixOfOneNameDiffer() throws {
        #expect(try SchemaTarget("/app").storageKey != SchemaTarget("/app/").storageKey)
        // A percent sign in a path is escaped, so no key path reads as another's escape.
        #expect(try SchemaTarget("/a%2Fb").storageKey != SchemaTarget("/a/b").storageKey)
    }

    @Test(arguments: ["/app/port", "/.discfg/schema", "/.discfg/schema/app%2F", "/.discfg/schema/%2Fa/b", "/.discfg/schema/%2Fa%2", "/.discfg/schema/%2Fa%ZZ", "/.discfg/schema/%2Fa%2F%2F", "/.discfg/schema/%2F.%2F", "/.discfg/tokens"])
    func keysThatNameNoSchemaReadAsNone(path: String) throws {
        let key = try Key(path)
        #expect(SchemaTarget(storageKey: key) == nil)
    }

    @Test(arguments: ["/.discfg", "/.discfg/", "/.discfg/schema/", "/.discfg/x", ".discfg/y/"])
    func discfgsOwnPrefixTakesNoSchema(text: String) throws {
        try expectError(.invalidArgument, field: "key", mentioning: ["reserved"]) { try SchemaTarget(text) }
    }

    @Test(arguments: ["//", "/a//b", "/a/../b"])
    func badPathsAreRefused(text: String) throws {
        try expectError(.invalidArgument) { try SchemaTarget(text) }
    }

    @Test("a path too long to name its schema is refused, naming the path")
    func tooLongForItsStorageKey() throws {
        let fits = "/" + String(repeating: "a", count: Key.maxBytes - SchemaTarget.namespace.path.utf8.count - 3)
        #expect(try SchemaTarget(fits).storageKey.path.utf8.count == Key.maxBytes)
        try expectError(.invalidArgument, field: "key", mentioning: ["too long"]) { try SchemaTarget(fits + "a") }
    }

    @Test(arguments: [
        ("/app/port", "/app/port", true), ("/app/port", "/app/ports", false), ("/app/port", "/app/port/x", false),
        ("/app/", "/app/port", true), ("/app/", "/app/db/port", true), ("/app/", "/apps", false),
        ("/", "/anything", true), ("/", "/.discfg/schema/%2F", false), ("/", "/.discfg/x", false),
    ])
    func aSchemaCoversItsKeyOrTheKeysUnderItsPrefix(target: String, key: String, covered: Bool) throws {
        #expect(try SchemaTarget(target).covers(Key(key)) == covered)
    }

    @Test("targets sort by path, byte by byte")
    func targetsSortByPath() throws {
        let targets = try ["/b", "/a/", "/", "/a/b", "/a"].map(SchemaTarget.init)
        #expect(targets.sorted().map(\.path) == ["/", "/a", "/a/", "/a/b", "/b"])
    }

    @Test("a violation reads as KEY: POINTER: message (keyword), the pointer left out for the whole value")
    func violationDescription() {
        #expect(SchemaViolation(key: "/app/settings", pointer: "/port", keyword: "maximum", message: "must be ≤ 65535").description == "/app/settings: /port: must be ≤ 65535 (maximum)")
        #expect(SchemaViolation(key: "/app/", pointer: "", keyword: "required", message: "name is missing").description == "/app/: name is missing (required)")
    }

    @Test("the refusal names the first violation and counts the rest")
    func refusalMessage() {
        let violations = [
            SchemaViolation(key: "/a", pointer: "", keyword: "type", message: "must be an integer"),
            SchemaViolation(key: "/b", pointer: "/x", keyword: "maximum", message: "must be ≤ 5"),
        ]
        let error = SchemaBook.refusal(violations)
        #expect(error.code == .schemaViolation)
        #expect(error.violations == violations)
        #expect(error.message == "schema violation, nothing was changed: /a: must be an integer (type) (and 1 more)")
        #expect(SchemaBook.refusal(Array(violations.prefix(1))).message == "schema violation, nothing was changed: /a: must be an integer (type)")
    }

    @Test("a schema is compiled once per text, and an invalid one is refused each time with the same error")
    func validatorsAreCached() throws {
        let schema = Data(#"{"type": "integer", "maximum": 10}"#.utf8)
        let validator = try SchemaBook.validator(schema)
        let target = try SchemaTarget("/n")
        #expect(SchemaBook.violations(of: 5, against: validator, target: target).isEmpty)
        let found = SchemaBook.violations(of: 11, against: try SchemaBook.validator(schema), target: target)
        #expect(found.map(\.keyword) == ["maximum"])
        #expect(found.map(\.key) == ["/n"])
        // The same broken text met first for another target: the error names each its own.
        try expectError(.invalidArgument, field: "schema", mentioning: ["the schema for /other/"]) {
            try SchemaBook.validator(Data("{".utf8), for: try SchemaTarget("/other/"))
        }
        for _ in 0..<2 {
            try expectError(.invalidArgument, field: "schema", mentioning: ["the schema for /n", "not valid JSON", "line 1"]) {
                try SchemaBook.validator(Data("{".utf8), for: target)
            }
        }
    }

    @Test("a prefix's violation is placed in the key its member belongs to")
    func prefixViolationsArePlacedInTheirKey() throws {
        let schema = Data(#"{"properties": {"db": {"properties": {"opts": {"properties": {"retries": {"maximum": 5}}}}}}, "required": ["name"]}"#.utf8)
        let document = try JSONContent.parse(Data(#"{"db": {"opts": {"retries": 9}}}"#.utf8), key: nil)
        let keys: Set<Key> = [try Key("/app/db/opts")]
        let violations = SchemaBook.violations(of: document, against: try SchemaBook.validator(schema), target: try SchemaTarget("/app/"), keys: keys)
        #expect(Set(violations.map { "\($0.key)#\($0.pointer) \($0.keyword)" }) == ["/app/db/opts#/retries maximum", "/app/# required"])
    }
}
