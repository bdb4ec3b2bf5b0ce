import Testing

@testable import DiscfgJSON

@Suite("DiscfgJSONTests.MergePatch")
struct MergePatchTests {
    /// RFC 7386 appendix A: original, patch, result.
    @Test(arguments: [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
        (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
        (#"{"a":"foo"}"#, #"null"#, #"null"#),
        (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
        (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
        (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
    ])
    func rfc7386AppendixA(original: String, patch: String, result: String) throws {
        let merged = MergePatch.apply(try JSONParser.parse(patch), to: try JSONParser.parse(original))
        // Compared as text: member order is part of what is checked (kept members stay, new ones go last).
        #expect(try JSONSerializer.string(merged) == result)
    }

    @Test func rfc7386Section3Example() throws {
        let target = try JSONParser.parse(#"""
            {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"},
             "tags": ["example", "sample"], "content": "This will be unchanged"}
            """#)
        let patch = try JSONParser.parse(#"""
            {"title": "Hello!", "phoneNumber": "+01-555-1234", "author": {"familyName": null}, "tags": ["example"]}
            """#)
        #expect(try JSONSerializer.string(MergePatch.apply(patch, to: target))
            == #"{"title":"Hello!","author":{"givenName":"John"},"tags":["example"],"content":"This will be unchanged","phoneNumber":"+01-555-1234"}"#)
    }

    @Test func theTargetIsUntouched() throws {
        let target = try JSONParser.parse(#"{"a": {"b": 1, "c": [1, 2]}, "d": 2}"#)
        let copy = target
        let merged = MergePatch.apply(try JSONParser.parse(#"{"a": {"b": null, "e": 3}, "d": null}"#), to: target)
        #expect(try JSONSerializer.string(merged) == #"{"a":{"c":[1,2],"e":3}}"#)
        #expect(try JSONSerializer.string(target) == #"{"a":{"b":1,"c":[1,2]},"d":2}"#)
        #expect(target == copy)
    }

    @Test func aPatchAtTheParsersDepthLimitMergesWithoutRecursion() throws {
        // 511 nested objects in both, the patch replacing the innermost value and adding one at every level.
        let depth = 511
        let target = try JSONParser.parse(String(repeating: #"{"k":"#, count: depth) + "1" + String(repeating: "}", count: depth))
        let patch = try JSONParser.parse(String(repeating: #"{"n":0,"k":"#, count: depth) + "2" + String(repeating: "}", count: depth))
        let merged = MergePatch.apply(patch, to: target)
        let innermost = JSONPointer(tokens: Array(repeating: "k", count: depth))
        #expect(innermost.resolve(in: merged) == 2)
        #expect(JSONPointer(tokens: Array(repeating: "k", count: depth - 1) + ["n"]).resolve(in: merged) == 0)
        #expect(innermost.resolve(in: target) == 1)
    }

    @Test func manyMembersMergeInLinearTime() throws {
        // 100,000 members added, replaced, then all but one removed: each is a constant-time edit of one object.
        let count = 100_000
        var additions = JSONObject()
        for i in 0..<count { additions["k\(i)"] = .number(JSONNumber(i)) }
        var replacements = JSONObject()
        for i in 0..<count { replacements["k\(i)"] = "v" }
        let start = ContinuousClock.now
        let added = MergePatch.apply(.object(additions), to: ["keep": true])
        let replaced = MergePatch.apply(.object(replacements), to: added)
        var removals = JSONObject()
        for i in 0..<count - 1 { removals["k\(i)"] = JSONValue.null }
        let removed = MergePatch.apply(.object(removals), to: replaced)
        let elapsed = ContinuousClock.now - start
        #expect(removed == ["keep": true, "k99999": "v"])
        guard case .object(let object) = replaced else {
            Issue.record("not an object")
            return
        }
        #expect(object.count == count + 1)
        #expect(object.keys.first == "keep")
        #expect(object["k99999"] == "v")
        #expect(elapsed < .seconds(20), "took \(elapsed)")
    }
}
