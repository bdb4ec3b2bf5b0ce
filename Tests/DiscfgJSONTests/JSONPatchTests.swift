import Testing

@testable import DiscfgJSON

@Suite("DiscfgJSONTests.JSONPatch")
struct JSONPatchTests {
    /// Applies the patch text to the document text.
    private func apply(_ patch: String, to document: String) throws -> JSONValue {
        try JSONPatch(document: JSONParser.parse(patch)).apply(to: JSONParser.parse(document))
    }

    /// The error applying (or reading) the patch raises, or nil.
    private func failure(_ patch: String, to document: String) throws -> JSONPatchError? {
        do {
            _ = try JSONPatch(document: JSONParser.parse(patch)).apply(to: JSONParser.parse(document))
            return nil
        } catch let error as JSONPatchError {
            return error
        }
    }

    /// RFC 6902 appendix A: document, patch, result (compared as compact text, so member order counts).
    @Test(arguments: [
        // A.1 Adding an Object Member
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz","value":"qux"}]"#, #"{"foo":"bar","baz":"qux"}"#),
        // A.2 Adding an Array Element
        (#"{"foo":["bar","baz"]}"#, #"[{"op":"add","path":"/foo/1","value":"qux"}]"#, #"{"foo":["bar","qux","baz"]}"#),
        // A.3 Removing an Object Member
        (#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"remove","path":"/baz"}]"#, #"{"foo":"bar"}"#),
        // A.4 Removing an Array Element
        (#"{"foo":["bar","qux","baz"]}"#, #"[{"op":"remove","path":"/foo/1"}]"#, #"{"foo":["bar","baz"]}"#),
        // A.5 Replacing a Value
        (#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"replace","path":"/baz","value":"boo"}]"#, #"{"baz":"boo","foo":"bar"}"#),
        // A.6 Moving a Value
        (#"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#,
         #"[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]"#,
         #"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#),
        // A.7 Moving an Array Element
        (#"{"foo":["all","grass","cows","eat"]}"#, #"[{"op":"move","from":"/foo/1","path":"/foo/3"}]"#,
         #"{"foo":["all","cows","eat","grass"]}"#),
        // A.8 Testing a Value: Success
        (#"{"baz":"qux","foo":["a",2,"c"]}"#, #"[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]"#,
         #"{"baz":"qux","foo":["a",2,"c"]}"#),
        // A.10 Adding a Nested Member Object
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/child","value":{"grandchild":{}}}]"#, #"{"foo":"bar","child":{"grandchild":{}}}"#),
        // A.11 Ignoring Unrecognized Elements
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz","value":"qux","xyz":123}]"#, #"{"foo":"bar","baz":"qux"}"#),
        // A.14 ~ Escape Ordering
        (#"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":10}]"#, #"{"/":9,"~1":10}"#),
        // A.16 Adding an Array Value
        (#"{"foo":["bar"]}"#, #"[{"op":"add","path":"/foo/-","value":["abc","def"]}]"#, #"{"foo":["bar",["abc","def"]]}"#),
    ])
    func rfc6902AppendixA(document: String, patch: String, result: String) throws {
        #expect(try JSONSerializer.string(apply(patch, to: document)) == result)
    }

    @Test func rfc6902AppendixAErrors() throws {
        // A.9 Testing a Value: Error
        let a9 = try #require(try failure(#"[{"op":"test","path":"/baz","value":"bar"}]"#, to: #"{"baz":"qux"}"#))
        #expect(a9 == JSONPatchError(.conflict, operationIndex: 0, pointer: "/baz",
            message: #"operation 0 ("test"), path "/baz": found "qux", expected "bar""#))
        // A.12 Adding to a Nonexistent Target
        let a12 = try #require(try failure(#"[{"op":"add","path":"/baz/bat","value":"qux"}]"#, to: #"{"foo":"bar"}"#))
        #expect(a12 == JSONPatchError(.conflict, operationIndex: 0, pointer: "/baz/bat",
            message: #"operation 0 ("add"), path "/baz/bat": "/baz" does not exist"#))
        // A.13 Invalid JSON Patch Document: the duplicate "op" is refused by the parser.
        #expect(throws: JSONParseError.self) {
            try JSONParser.parse(#"[{"op":"add","path":"/baz","value":"qux","op":"remove"}]"#)
        }
        // A.15 Comparing Strings and Numbers
        let a15 = try #require(try failure(#"[{"op":"test","path":"/~01","value":"10"}]"#, to: #"{"/":9,"~1":10}"#))
        #expect(a15.kind == .conflict)
        #expect(a15.message == #"operation 0 ("test"), path "/~01": found 10, expected "10""#)
    }

    @Test func addSemantics() throws {
        // At the root: the whole document is replaced.
        #expect(try apply(#"[{"op":"add","path":"","value":[1]}]"#, to: #"{"a":1}"#) == [1])
        // An existing member keeps its place; a new one is appended.
        #expect(try JSONSerializer.string(apply(#"[{"op":"add","path":"/a","value":3},{"op":"add","path":"/c","value":4}]"#,
            to: #"{"a":1,"b":2}"#)) == #"{"a":3,"b":2,"c":4}"#)
        // Index == count appends; "-" appends; 0 prepends.
        #expect(try apply(#"[{"op":"add","path":"/2","value":"c"},{"op":"add","path":"/-","value":"d"},{"op":"add","path":"/0","value":"z"}]"#,
            to: #"["a","b"]"#) == ["z", "a", "b", "c", "d"])
        // Into an empty member name and a nested empty array.
        #expect(try apply(#"[{"op":"add","path":"/","value":1},{"op":"add","path":"/x/0","value":2}]"#, to: #"{"x":[]}"#)
            == ["x": [2], "": 1])
        // The value null is a value.
        #expect(try apply(#"[{"op":"add","path":"/a","value":null}]"#, to: #"{}"#) == ["a": nil])
    }

    @Test func replaceKeepsThePlaceAndMayReplaceTheRoot() throws {
        #expect(try JSONSerializer.string(apply(#"[{"op":"replace","path":"/a","value":{"x":1}}]"#, to: #"{"a":1,"b":2}"#))
            == #"{"a":{"x":1},"b":2}"#)
        #expect(try apply(#"[{"op":"replace","path":"","value":"all"}]"#, to: #"{"a":1}"#) == "all")
        #expect(try apply(#"[{"op":"replace","path":"/1","value":9}]"#, to: #"[1,2,3]"#) == [1, 9, 3])
    }

    @Test func moveAndCopy() throws {
        // Moving within an object takes the member out and appends it.
        #expect(try JSONSerializer.string(apply(#"[{"op":"move","from":"/a","path":"/z"}]"#, to: #"{"a":1,"b":2}"#))
            == #"{"b":2,"z":1}"#)
        // Moving to itself changes nothing (but "from" must exist).
        #expect(try apply(#"[{"op":"move","from":"/a","path":"/a"}]"#, to: #"{"a":1,"b":2}"#) == ["a": 1, "b": 2])
        // Moving out of a member into its parent.
        #expect(try apply(#"[{"op":"move","from":"/a/b","path":"/a"}]"#, to: #"{"a":{"b":{"c":1}}}"#) == ["a": ["c": 1]])
        // The whole document into... nothing moves into its own child, but it may replace its child's parent.
        #expect(try apply(#"[{"op":"move","from":"/0","path":""}]"#, to: #"[[1,2]]"#) == [1, 2])
        // Copy leaves the source, and later edits to one do not show in the other.
        #expect(try apply(#"[{"op":"copy","from":"/a","path":"/b"},{"op":"add","path":"/b/-","value":3}]"#, to: #"{"a":[1,2]}"#)
            == ["a": [1, 2], "b": [1, 2, 3]])
        // Copy into its own child is allowed (the copy is taken first).
        #expect(try apply(#"[{"op":"copy","from":"/a","path":"/a/self"}]"#, to: #"{"a":{"x":1}}"#)
            == ["a": ["x": 1, "self": ["x": 1]]])
        // Copy the whole document into a member.
        #expect(try apply(#"[{"op":"copy","from":"","path":"/b"}]"#, to: #"{"a":1}"#) == ["a": 1, "b": ["a": 1]])
    }

    @Test func testUsesJSONEquality() throws {
        let document = #"{"n":1,"o":{"a":1,"b":[1.0,{"c":null}]},"s":"é"}"#
        for patch in [
            #"[{"op":"test","path":"/n","value":1.0}]"#,
            #"[{"op":"test","path":"/n","value":10e-1}]"#,
            #"[{"op":"test","path":"/o","value":{"b":[1,{"c":null}],"a":1}}]"#,
            #"[{"op":"test","path":"","value":{"s":"é","o":{"a":1,"b":[1,{"c":null}]},"n":1}}]"#,
            #"[{"op":"test","path":"/o/b/1/c","value":null}]"#,
        ] {
            #expect(try apply(patch, to: document) == (try JSONParser.parse(document)), "\(patch)")
        }
        for patch in [
            #"[{"op":"test","path":"/n","value":"1"}]"#,
            #"[{"op":"test","path":"/o","value":{"a":1}}]"#,
            #"[{"op":"test","path":"/o/b","value":[{"c":null},1]}]"#,
            #"[{"op":"test","path":"/s","value":"e\u0301"}]"#,
            #"[{"op":"test","path":"/o/b/1/c","value":false}]"#,
        ] {
            #expect(try failure(patch, to: document)?.kind == .conflict, "\(patch)")
        }
    }

    @Test func failedTestQuotesValuesCutAtSixtyCharacters() throws {
        let long = String(repeating: "x", count: 200)
        let error = try #require(try failure(#"[{"op":"test","path":"/a","value":{"k":"\#(long)"}}]"#, to: #"{"a":"\#(long)"}"#))
        #expect(error.message == #"operation 0 ("test"), path "/a": found ""# + String(repeating: "x", count: 56)
            + #"…, expected {"k":""# + String(repeating: "x", count: 51) + "…")
        let missing = try #require(try failure(#"[{"op":"test","path":"/a/b","value":1}]"#, to: #"{"a":{}}"#))
        #expect(missing.message == #"operation 0 ("test"), path "/a/b": "/a/b" does not exist"#)
    }

    /// Patch, document, the error's pointer and message.
    @Test(arguments: [
        (#"[{"op":"remove","path":""}]"#, #"{"a":1}"#, "",
         #"operation 0 ("remove"), path "": the whole document cannot be removed ("" names the root, which has no parent to remove it from)"#),
        (#"[{"op":"remove","path":"/b"}]"#, #"{"a":1}"#, "/b", #"operation 0 ("remove"), path "/b": "/b" does not exist"#),
        (#"[{"op":"replace","path":"/b","value":1}]"#, #"{"a":1}"#, "/b", #"operation 0 ("replace"), path "/b": "/b" does not exist"#),
        (#"[{"op":"remove","path":"/3"}]"#, #"[1,2,3]"#, "/3",
         #"operation 0 ("remove"), path "/3": "/3" does not exist: index 3 is out of range, the array "" has 3 elements"#),
        (#"[{"op":"remove","path":"/-"}]"#, #"[1]"#, "/-",
         #"operation 0 ("remove"), path "/-": "/-" names the end of the array "", after its last element, where there is no value"#),
        (#"[{"op":"add","path":"/a/4","value":0}]"#, #"{"a":[1,2,3]}"#, "/a/4",
         #"operation 0 ("add"), path "/a/4": index 4 is out of range: the array "/a" has 3 elements (add inserts at 0 to 3, or appends at "-")"#),
        (#"[{"op":"add","path":"/a/b","value":0}]"#, #"{"a":"text"}"#, "/a/b",
         #"operation 0 ("add"), path "/a/b": "/a" is a string, not an object or array"#),
        (#"[{"op":"add","path":"/a/b/c","value":0}]"#, #"{"a":[]}"#, "/a/b/c",
         #"operation 0 ("add"), path "/a/b/c": "/a" is an array and "b" is not an array index (digits, or "-" for the end)"#),
        (#"[{"op":"move","from":"/x","path":"/y"}]"#, #"{"a":1}"#, "/x", #"operation 0 ("move"), from "/x": "/x" does not exist"#),
        (#"[{"op":"move","from":"/x","path":"/x"}]"#, #"{"a":1}"#, "/x", #"operation 0 ("move"), from "/x": "/x" does not exist"#),
        (#"[{"op":"move","from":"/a","path":"/q/r"}]"#, #"{"a":1}"#, "/q/r", #"operation 0 ("move"), path "/q/r": "/q" does not exist"#),
        (#"[{"op":"copy","from":"/a/0/z","path":"/y"}]"#, #"{"a":[{}]}"#, "/a/0/z", #"operation 0 ("copy"), from "/a/0/z": "/a/0/z" does not exist"#),
        (#"[{"op":"test","path":"/a/1","value":1}]"#, #"{"a":true}"#, "/a/1", #"operation 0 ("test"), path "/a/1": "/a" is a boolean, not an object or array"#),
        (#"[{"op":"add","path":"/0","value":1}]"#, #"3"#, "/0", #"operation 0 ("add"), path "/0": "" is an integer, not an object or array"#),
    ])
    func conflictsNameTheOperationAndPointer(patch: String, document: String, pointer: String, message: String) throws {
        let error = try #require(try failure(patch, to: document))
        #expect(error == JSONPatchError(.conflict, operationIndex: 0, pointer: pointer, message: message))
        #expect(error.description == message)
    }

    @Test(arguments: [
        ("01", #""01" is not an array index (leading zeros are not allowed)"#),
        ("00", #""00" is not an array index (leading zeros are not allowed)"#),
        ("-1", #""-1" is not an array index (digits, or "-" for the end)"#),
        ("+1", #""+1" is not an array index (digits, or "-" for the end)"#),
        ("1.0", #""1.0" is not an array index (digits, or "-" for the end)"#),
        ("9223372036854775807", "index 9223372036854775807 is out of range"),
        ("9223372036854775808", "index 9223372036854775808 is out of range"),
        ("18446744073709551616", "index 18446744073709551616 is out of range"),
        ("99999999999999999999999999999999999999999", "index 99999999999999999999999999999999999999999 is out of range"),
    ])
    func badArrayIndicesAreConflictsForEveryOperation(token: String, reason: String) throws {
        let document = #"{"a":[1,2,3]}"#
        for patch in [
            #"[{"op":"add","path":"/a/\#(token)","value":0}]"#,
            #"[{"op":"remove","path":"/a/\#(token)"}]"#,
            #"[{"op":"replace","path":"/a/\#(token)","value":0}]"#,
            #"[{"op":"test","path":"/a/\#(token)","value":1}]"#,
            #"[{"op":"copy","from":"/a/\#(token)","path":"/b"}]"#,
            #"[{"op":"move","from":"/a/\#(token)","path":"/b"}]"#,
            #"[{"op":"add","path":"/a/\#(token)/x","value":0}]"#,
        ] {
            let error = try #require(try failure(patch, to: document), "\(patch)")
            #expect(error.kind == .conflict, "\(patch)")
            #expect(error.operationIndex == 0)
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }

    /// Patch document and the malformed error's index and message.
    @Test(arguments: [
        (#"{"op":"add"}"#, nil, "a JSON Patch is an array of operations, not an object"),
        (#"[{"op":"test","path":"","value":1}, "add"]"#, 1, "operation 1: must be an object, not a string"),
        (#"[{"path":"/a"}]"#, 0, #"operation 0: "op" is missing"#),
        (#"[{"op":1,"path":"/a"}]"#, 0, #"operation 0: "op" must be a string, not an integer"#),
        (#"[{"op":"Add","path":"/a","value":1}]"#, 0, #"operation 0: unknown "op" "Add"; expected add, remove, replace, move, copy or test"#),
        (#"[{"op":"add","value":1}]"#, 0, #"operation 0 ("add"): "path" is missing"#),
        (#"[{"op":"add","path":null,"value":1}]"#, 0, #"operation 0 ("add"): "path" must be a string (a JSON pointer), not a null"#),
        (#"[{"op":"add","path":["a"],"value":1}]"#, 0, #"operation 0 ("add"): "path" must be a string (a JSON pointer), not an array"#),
        (#"[{"op":"add","path":"/a"}]"#, 0, #"operation 0 ("add"): "value" is missing"#),
        (#"[{"op":"replace","path":"/a"}]"#, 0, #"operation 0 ("replace"): "value" is missing"#),
        (#"[{"op":"test","path":"/a"}]"#, 0, #"operation 0 ("test"): "value" is missing"#),
        (#"[{"op":"move","path":"/a"}]"#, 0, #"operation 0 ("move"): "from" is missing"#),
        (#"[{"op":"copy","path":"/a","from":5}]"#, 0, #"operation 0 ("copy"): "from" must be a string (a JSON pointer), not an integer"#),
        (#"[{"op":"remove","path":"a"}]"#, 0,
         #"operation 0 ("remove"): "path" "a" is not a JSON pointer: must be empty or start with "/" (found "a" at position 1)"#),
        (#"[{"op":"test","path":"","value":1},{"op":"remove","path":"/~2"}]"#, 1,
         #"operation 1 ("remove"): "path" "/~2" is not a JSON pointer: "~2" at position 2 is not an escape; "~" must be followed by "0" (for "~") or "1" (for "/")"#),
        (#"[{"op":"remove","path":"/a","x":1},{"op":"remove","path":"/b"},{"op":"move","from":"/a","path":"/a/b"}]"#, 2,
         #"operation 2 ("move"): "path" "/a/b" is inside "from" "/a"; a value cannot be moved into its own child"#),
        (#"[{"op":"move","from":"","path":"/a"}]"#, 0,
         #"operation 0 ("move"): "path" "/a" is inside "from" ""; a value cannot be moved into its own child"#),
    ] as [(String, Int?, String)])
    func malformedPatchesNameTheOperation(patch: String, index: Int?, message: String) throws {
        do {
            let read = try JSONPatch(document: JSONParser.parse(patch))
            Issue.record("read as \(read)")
        } catch let error as JSONPatchError {
            #expect(error.kind == .malformed)
            #expect(error.operationIndex == index)
            #expect(error.message == message)
        }
    }

    @Test func aMoveIntoItsOwnChildBuiltInCodeIsMalformedWhenApplied() throws {
        let patch = JSONPatch([.move(from: try JSONPointer("/a"), path: try JSONPointer("/a/b"))])
        #expect(throws: JSONPatchError(.malformed, operationIndex: 0, pointer: "/a/b",
            message: #"operation 0 ("move"): "path" "/a/b" is inside "from" "/a"; a value cannot be moved into its own child"#)) {
            try patch.apply(to: ["a": ["x": 1]])
        }
    }

    @Test func allOrNothingAndTheInputIsUntouched() throws {
        let document = try JSONParser.parse(#"{"a":[1,2,3],"b":{"c":"d"}}"#)
        let before = try JSONSerializer.string(document)
        let patch = try JSONPatch(document: JSONParser.parse(#"""
            [{"op":"add","path":"/a/-","value":4},{"op":"remove","path":"/b/c"},{"op":"replace","path":"","value":{}},
             {"op":"add","path":"/x","value":1},{"op":"test","path":"/x","value":2}]
            """#))
        #expect(throws: JSONPatchError.self) { try patch.apply(to: document) }
        #expect(try JSONSerializer.string(document) == before)

        // A successful patch leaves its input as it was too.
        let applied = try JSONPatch(Array(patch.operations.dropLast())).apply(to: document)
        #expect(applied == ["x": 1])
        #expect(try JSONSerializer.string(document) == before)
        let edited = try JSONPatch(document: JSONParser.parse(#"[{"op":"add","path":"/a/0","value":0},{"op":"add","path":"/b/e","value":1}]"#))
            .apply(to: document)
        #expect(try JSONSerializer.string(edited) == #"{"a":[0,1,2,3],"b":{"c":"d","e":1}}"#)
        #expect(try JSONSerializer.string(document) == before)
    }

    @Test func theDocumentFormRoundTrips() throws {
        let text = #"""
            [{"op":"add","path":"/a~1b","value":{"x":[1]}},{"op":"remove","path":"/m~0n"},{"op":"replace","path":"","value":null},
            {"op":"move","from":"/a","path":"/b"},{"op":"copy","from":"/b","path":"/c/-"},{"op":"test","path":"/c/0","value":1.5}]
            """#
        let patch = try JSONPatch(document: JSONParser.parse(text))
        #expect(patch.operations.map(\.name) == ["add", "remove", "replace", "move", "copy", "test"])
        #expect(patch.operations[0] == .add(path: JSONPointer(tokens: ["a/b"]), value: ["x": [1]]))
        #expect(try JSONSerializer.string(patch.document) == (try JSONSerializer.string(JSONParser.parse(text))))
        #expect(try JSONPatch(document: patch.document) == patch)
    }
}

@Suite("DiscfgJSONTests.JSONPatchObjectEdits")
struct JSONPatchObjectEditTests {
    @Test func membersKeepTheirOrderThroughRemovalsAndGapClosing() {
        var object = JSONObject()
        for i in 0..<100 { object["k\(i)"] = .number(JSONNumber(i)) }
        // Remove every even member: more than 16 gaps and then half the slots, so the gaps are closed on the way.
        for i in stride(from: 0, to: 100, by: 2) { #expect(object.removeValue(forKey: "k\(i)") == .number(JSONNumber(i))) }
        #expect(object.removeValue(forKey: "k0") == nil)
        #expect(object.count == 50)
        #expect(object.keys == stride(from: 1, to: 100, by: 2).map { "k\($0)" })
        #expect(object.members.map(\.value) == stride(from: 1, to: 100, by: 2).map { .number(JSONNumber($0)) })
        #expect(Array(object).count == 50)
        // Re-adding a removed key appends it; replacing keeps the place.
        object["k0"] = "back"
        object["k1"] = "first"
        #expect(object.keys.first == "k1")
        #expect(object.keys.last == "k0")
        #expect(object["k0"] == "back")
        #expect(object["k2"] == nil)
        #expect(!object.contains("k2"))
        // Equality and hashing ignore order and gaps.
        var rebuilt = JSONObject()
        for (key, value) in object.members.reversed() { rebuilt[key] = value }
        #expect(rebuilt == object)
        #expect(rebuilt.hashValue == object.hashValue)
        // Emptied, then used again.
        for key in object.keys { object[key] = nil }
        #expect(object.isEmpty)
        #expect(object.keys == [])
        object["x"] = 1
        #expect(object.members.count == 1)
        #expect(JSONValue.object(object) == ["x": 1])
    }
}
