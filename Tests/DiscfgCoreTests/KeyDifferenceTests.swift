import DiscfgCore
import DiscfgJSON
import Foundation
import Testing

@Suite("Core: key differences")
struct KeyDifferenceTests {
    private func entry(_ key: String, _ value: String, _ contentType: String? = nil) throws -> ConfigSnapshot.Entry {
        ConfigSnapshot.Entry(key: try Key(key), value: Data(value.utf8), contentType: contentType)
    }

    @Test("the same keys and values make no difference; others are added, removed or changed, in key order")
    func keys() throws {
        let old = [try entry("/b", "1"), try entry("/a", "x"), try entry("/gone", "g")]
        #expect(KeyDifference.between(old, old.reversed()).isEmpty)
        let found = KeyDifference.between(old, [try entry("/a", "y"), try entry("/b", "1"), try entry("/new", "n")])
        #expect(found.map(\.key.path) == ["/a", "/gone", "/new"])
        #expect(found.map(\.kind) == [.changed, .removed, .added])
        #expect(found[0].members == nil, "text is compared whole")
        #expect(found[1].new == nil && found[2].old == nil)
    }

    @Test("JSON objects and arrays are compared as JSON, by member; scalars as text")
    func json() throws {
        let same = KeyDifference.between([try entry("/s", #"{"a": 1, "b": 2}"#)], [try entry("/s", #"{"b":2,"a":1}"#)])
        #expect(same.isEmpty, "member order and spacing do not count")
        let changed = try #require(KeyDifference.between([try entry("/s", #"{"db": {"host": "db1"}}"#)], [try entry("/s", #"{"db": {"host": "db2"}}"#)]).first)
        #expect(changed.members?.map(\.description) == [#"/db/host: "db1" → "db2""#])
        let numbers = KeyDifference.between([try entry("/n", "1.0")], [try entry("/n", "1")])
        #expect(numbers.count == 1 && numbers[0].members == nil, "1.0 and 1 are different settings")
        let broken = KeyDifference.between([try entry("/j", "{not json")], [try entry("/j", "{}")])
        #expect(broken.count == 1 && broken[0].members == nil)
    }

    @Test("content types count where both sides name one")
    func contentTypes() throws {
        #expect(KeyDifference.between([try entry("/a", "x", "text/plain")], [try entry("/a", "x")]).isEmpty)
        let found = KeyDifference.between([try entry("/a", "{}", "text/plain")], [try entry("/a", "{}", "application/json")])
        #expect(found.count == 1 && found[0].contentTypeChanged && found[0].members == [])
    }

    @Test("sealed values equal only the same sealed bytes, and are marked secret")
    func secrets() throws {
        let sealed = SecretMarker.contentType
        #expect(KeyDifference.between([try entry("/p", "AAA", sealed)], [try entry("/p", "AAA", sealed)]).isEmpty)
        let resealed = KeyDifference.between([try entry("/p", "AAA", sealed)], [try entry("/p", "BBB", sealed)])
        #expect(resealed.count == 1 && resealed[0].isSecret)
        let opened = KeyDifference.between([try entry("/p", #"{"a":1}"#, sealed)], [try entry("/p", #"{"a":1}"#)])
        #expect(opened.count == 1 && opened[0].isSecret && opened[0].members == nil, "a secret against a plain value differs, and shows nothing")
    }

    @Test("env names: keys as export names them, schemas left out, two keys on one name refused")
    func envNames() throws {
        let renamed = try EnvFile.variables(of: [try entry("/db/host", "db1"), try entry("/.discfg/schemas/x", "{}")])
        #expect(renamed.map(\.key.path) == ["/DB_HOST"])
        #expect(throws: DiscfgError.self) { try EnvFile.variables(of: [try entry("/db/host", "a"), try entry("/db-host", "b")]) }
        #expect(try EnvFile.variablePrefix(of: KeyPrefix("/db/")) == "DB_")
        #expect(try EnvFile.variablePrefix(of: .root) == nil)
    }
}
