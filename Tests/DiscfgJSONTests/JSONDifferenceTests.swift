import Testing

import DiscfgJSON

@Suite("DiscfgJSONTests.JSONDifference")
struct JSONDifferenceTests {
    private func differences(_ old: String, _ new: String) throws -> [String] {
        JSONDifference.between(try JSONParser.parse(old), try JSONParser.parse(new)).map(\.description)
    }

    @Test("equal documents have no differences, whatever their member order, spacing or number spelling")
    func equal() throws {
        #expect(try differences(#"{"a": 1, "b": [1, {"c": null}]}"#, #"{"b":[1,{"c":null}],"a":1.0}"#).isEmpty)
        #expect(try differences("[]", "[]").isEmpty)
        #expect(try differences(#""x""#, #""x""#).isEmpty)
    }

    @Test("nested members are named by pointer: changed, removed, then added, in the old document's order")
    func nested() throws {
        let found = try differences(
            #"{"db": {"host": "db1", "port": 5432}, "debug": true, "name": "a"}"#,
            #"{"name": "b", "db": {"port": 5432, "host": "db2", "pool": {"size": 4}}}"#
        )
        #expect(found == [#"/db/host: "db1" → "db2""#, #"/db/pool: added {"size":4}"#, "/debug: removed true", #"/name: "a" → "b""#])
    }

    @Test("arrays are compared index by index; extra elements are added or removed at their index")
    func arrays() throws {
        #expect(try differences("[1, 2, 3]", "[1, 5]") == ["/1: 2 → 5", "/2: removed 3"])
        #expect(try differences(#"{"l": [1]}"#, #"{"l": [1, [2], 3]}"#) == ["/l/1: added [2]", "/l/2: added 3"])
    }

    @Test("a value of another kind is one change at its place; the root is named as the whole value")
    func kinds() throws {
        #expect(try differences(#"{"a": {"b": 1}}"#, #"{"a": [1]}"#) == [#"/a: {"b":1} → [1]"#])
        #expect(try differences("[1]", #"{"0": 1}"#) == [#"(the whole value): [1] → {"0":1}"#])
    }

    @Test("member names with / and ~ are escaped in the pointer")
    func escaping() throws {
        let found = JSONDifference.between(try JSONParser.parse(#"{"a/b": 1, "c~d": 2}"#), try JSONParser.parse(#"{"a/b": 2}"#))
        #expect(found.map(\.pointer.description) == ["/a~1b", "/c~0d"])
        #expect(found.map(\.kind) == [.changed, .removed])
        #expect(found[0].old == .number(JSONNumber(1)) && found[0].new == .number(JSONNumber(2)))
        #expect(found[1].new == nil)
    }
}
