import Testing

@testable import DiscfgJSON

/// What a client who controls a patch can try, and what it costs.
@Suite("DiscfgJSONTests.JSONPatchHostileInput")
struct JSONPatchHostileInputTests {
    /// How long `body` takes.
    private func timed<T>(_ body: () throws -> T) rethrows -> (T, Duration) {
        let start = ContinuousClock.now
        let result = try body()
        return (result, ContinuousClock.now - start)
    }

    /// `rounds` × 4 operations on a document that grows as they apply: append to an array, add a
    /// member, replace the element just appended, test the member, all two levels down.
    private func growingPatch(rounds: Int) -> JSONPatch {
        var operations: [JSONPatch.Operation] = []
        operations.reserveCapacity(rounds * 4)
        let list = JSONPointer(tokens: ["config", "list"])
        let map = JSONPointer(tokens: ["config", "map"])
        for i in 0..<rounds {
            let number = JSONValue.number(JSONNumber(i))
            operations.append(.add(path: list.appending("-"), value: number))
            operations.append(.add(path: map.appending("k\(i)"), value: number))
            operations.append(.replace(path: list.appending(String(i)), value: ["n": number]))
            operations.append(.test(path: map.appending("k\(i)"), value: number))
        }
        return JSONPatch(operations)
    }

    @Test func oneHundredThousandOperationsApplyInLinearTime() throws {
        let document: JSONValue = ["config": ["list": [], "map": [:]], "other": "kept"]
        let small = growingPatch(rounds: 2_500)      // 10,000 operations
        let large = growingPatch(rounds: 25_000)     // 100,000 operations
        // The faster of two runs each, so that a pause of the machine does not decide.
        let smallTime = try min(timed { try small.apply(to: document) }.1, timed { try small.apply(to: document) }.1)
        let (result, firstLargeTime) = try timed { try large.apply(to: document) }
        let largeTime = try min(firstLargeTime, timed { try large.apply(to: document) }.1)

        #expect(JSONPointer(tokens: ["config", "list", "24999", "n"]).resolve(in: result) == .number(JSONNumber(24_999)))
        #expect(JSONPointer(tokens: ["config", "map", "k24999"]).resolve(in: result) == .number(JSONNumber(24_999)))
        guard case .array(let list)? = JSONPointer(tokens: ["config", "list"]).resolve(in: result) else {
            Issue.record("no list")
            return
        }
        #expect(list.count == 25_000)
        #expect(document == ["config": ["list": [], "map": [:]], "other": "kept"])
        // Ten times the operations on a ten times larger document: about ten times the time when each
        // operation is an in-place edit, a hundred times if each one copied the array or object it edits.
        let ratio = largeTime / smallTime
        #expect(ratio < 35, "10,000 operations took \(smallTime), 100,000 took \(largeTime)")
        #expect(largeTime < .seconds(30), "100,000 operations took \(largeTime)")
    }

    @Test func editsOfALargeSharedDocumentCopyItOnceNotPerOperation() throws {
        // 100,000 replacements spread over a 100,000-element array and a 100,000-member object that the
        // caller still holds: the first edit of each copies it, the rest edit the copy in place.
        let count = 100_000
        var members = JSONObject()
        for i in 0..<count { members["k\(i)"] = .number(JSONNumber(i)) }
        let document: JSONValue = ["a": ["b": .array(Array(repeating: 0, count: count))], "m": .object(members)]
        var operations: [JSONPatch.Operation] = []
        for i in stride(from: 0, to: count, by: 2) {
            operations.append(.replace(path: JSONPointer(tokens: ["a", "b", String(count - 1 - i)]), value: 1))
            operations.append(.replace(path: JSONPointer(tokens: ["m", "k\(i)"]), value: "x"))
        }
        let (result, elapsed) = try timed { try JSONPatch(operations).apply(to: document) }
        #expect(JSONPointer(tokens: ["a", "b", "99999"]).resolve(in: result) == 1)
        #expect(JSONPointer(tokens: ["a", "b", "99998"]).resolve(in: result) == 0)
        #expect(JSONPointer(tokens: ["m", "k0"]).resolve(in: result) == "x")
        #expect(JSONPointer(tokens: ["m", "k1"]).resolve(in: result) == 1)
        #expect(JSONPointer(tokens: ["a", "b", "99999"]).resolve(in: document) == 0)
        #expect(JSONPointer(tokens: ["m", "k0"]).resolve(in: document) == 0)
        // Copying per operation would be 10^10 element copies: minutes, not seconds.
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }

    @Test func removingEveryMemberAndElementFromTheFrontIsLinear() throws {
        // Object members leave gaps that are closed in bulk; a shifting index took 79 s for 20,000 here.
        let count = 100_000
        var members = JSONObject()
        for i in 0..<count { members["k\(i)"] = .number(JSONNumber(i)) }
        let removeMembers = JSONPatch((0..<count - 1).map { .remove(path: JSONPointer(tokens: ["k\($0)"])) })
        let (left, memberTime) = try timed { try removeMembers.apply(to: .object(members)) }
        #expect(left == ["k99999": 99_999])
        #expect(memberTime < .seconds(20), "took \(memberTime)")
        // Array elements shift down (a memory move per removal, as RFC 6902 asks).
        let removeElements = JSONPatch(Array(repeating: .remove(path: JSONPointer(tokens: ["0"])), count: count - 1))
        let (last, elementTime) = try timed { try removeElements.apply(to: .array((0..<count).map { .number(JSONNumber($0)) })) }
        #expect(last == [99_999])
        #expect(elementTime < .seconds(20), "took \(elementTime)")
    }

    @Test func aPatchDocumentOfOneHundredThousandOperationsReadsAndApplies() throws {
        var text = "["
        for i in 0..<100_000 {
            if i > 0 { text += "," }
            text += #"{"op":"add","path":"/items/-","value":{"id":\#(i)}}"#
        }
        text += "]"
        let patch = try JSONPatch(document: JSONParser.parse(text))
        #expect(patch.operations.count == 100_000)
        let (result, elapsed) = try timed { try patch.apply(to: ["items": []]) }
        #expect(JSONPointer(tokens: ["items", "99999", "id"]).resolve(in: result) == .number(JSONNumber(99_999)))
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }

    @Test func aFourHundredDeepDocumentIsPatchedAtDepth() throws {
        let depth = 400
        let document = try JSONParser.parse(String(repeating: #"{"a":"#, count: depth) + "[1]" + String(repeating: "}", count: depth))
        let deepest = JSONPointer(tokens: Array(repeating: "a", count: depth))
        let patch = JSONPatch([
            .test(path: deepest, value: [1]),
            .add(path: deepest.appending("-"), value: 2),
            .add(path: deepest.appending("0"), value: 0),
            .replace(path: deepest.appending("1"), value: "one"),
            .copy(from: deepest, path: JSONPointer(tokens: ["copy"])),
            .add(path: try #require(deepest.parent).appending("sibling"), value: true),
            .move(from: deepest.appending("2"), path: JSONPointer(tokens: ["moved"])),
            .remove(path: try #require(deepest.parent).appending("sibling")),
            .test(path: deepest, value: [0, "one"]),
        ])
        let result = try patch.apply(to: document)
        #expect(deepest.resolve(in: result) == [0, "one"])
        #expect(result["copy"] == [0, "one", 2])
        #expect(result["moved"] == 2)
        #expect(deepest.appending("0").resolve(in: document) == 1)
        // A thousand edits at depth 400 each walk 400 levels; none copies the levels above.
        let appends = JSONPatch(Array(repeating: .add(path: deepest.appending("-"), value: 7), count: 1_000))
        let (appended, elapsed) = try timed { try appends.apply(to: document) }
        #expect(deepest.appending("1000").resolve(in: appended) == 7)
        #expect(elapsed < .seconds(20), "took \(elapsed)")

        // A failure at depth names the first missing level.
        let below = JSONPointer(tokens: Array(repeating: "a", count: depth - 1) + ["b", "c"])
        do {
            _ = try JSONPatch([.add(path: below, value: 1)]).apply(to: document)
            Issue.record("no error")
        } catch {
            #expect(error.kind == .conflict)
            #expect(error.pointer == below.description)
            #expect(error.message.hasSuffix("… does not exist"), "\(error.message)")
        }
    }

    @Test func aPointerOfTenThousandTokens() throws {
        let tokens = Array(repeating: "a", count: 10_000)
        let text = String(repeating: "/a", count: 10_000)
        let patchText = #"[{"op":"add","path":"\#(text)","value":1}]"#
        let patch = try JSONPatch(document: JSONParser.parse(patchText))
        #expect(patch.operations == [.add(path: JSONPointer(tokens: tokens), value: 1)])
        for document: JSONValue in [["a": ["a": [:]]], ["a": "scalar"], [], 1] {
            do {
                _ = try patch.apply(to: document)
                Issue.record("applied to \(document)")
            } catch {
                #expect(error.kind == .conflict)
                #expect(error.pointer == text)
                // The message stays short: pointers are quoted cut at 60 characters.
                #expect(error.message.count < 200, "\(error.message)")
            }
        }
        let deep = try JSONParser.parse(String(repeating: #"{"a":"#, count: 500) + "1" + String(repeating: "}", count: 500))
        #expect(throws: JSONPatchError.self) { try patch.apply(to: deep) }
        #expect(throws: JSONPatchError.self) { try JSONPatch([.remove(path: JSONPointer(tokens: tokens))]).apply(to: deep) }
        #expect(throws: JSONPatchError.self) { try JSONPatch([.test(path: JSONPointer(tokens: tokens), value: 1)]).apply(to: deep) }
        let shallower = JSONPointer(tokens: Array(tokens.prefix(500)))
        #expect(try JSONPatch([.replace(path: shallower, value: 2)]).apply(to: deep)
            == (try JSONParser.parse(String(repeating: #"{"a":"#, count: 500) + "2" + String(repeating: "}", count: 500))))
    }

    @Test func copiesCannotMultiplyTheDocument() throws {
        // Each copy of the root doubles the document (the copies share storage, so this would be cheap
        // until the document is written out: 2^40 values).
        let document: JSONValue = ["a": .array((0..<100).map { .number(JSONNumber($0)) })]
        let bomb = JSONPatch((0..<40).map { .copy(from: .root, path: JSONPointer(tokens: ["c\($0)"])) })
        let (outcome, elapsed) = timed { Result { () throws(JSONPatchError) in try bomb.apply(to: document) } }
        guard case .failure(let error) = outcome else {
            Issue.record("applied")
            return
        }
        #expect(error.kind == .conflict)
        // 102 values copied, then 205, 411, …: the copy that makes more than a million in all is the 14th.
        #expect(error.operationIndex == 13)
        #expect(error.message == #"operation 13 ("copy"), path "/c13": this patch copies more than 1000000 values (every value inside a copy counts, and inside a value moved deeper)"#)
        #expect(elapsed < .seconds(10), "took \(elapsed)")
        // A smaller budget stops sooner; a larger one lets a few more through.
        #expect(throws: JSONPatchError.self) {
            try JSONPatch(Array(bomb.operations.prefix(2))).apply(to: document, limits: .init(maxCopiedValues: 300))
        }
        let fine = try JSONPatch(Array(bomb.operations.prefix(2))).apply(to: document, limits: .init(maxCopiedValues: 400))
        #expect(JSONPointer(tokens: ["c1", "c0", "a", "99"]).resolve(in: fine) == 99)
    }

    /// An array `depth` levels deep around `inner`.
    private func nested(_ depth: Int, around inner: JSONValue = 1) -> JSONValue {
        var value = inner
        for _ in 0..<depth { value = [value] }
        return value
    }

    @Test func patchesCannotNestTheDocumentPastTheParsersDepth() throws {
        let limit = JSONPatch.Limits().maxDepth
        #expect(limit == JSONParser.Options().maxDepth)
        // Added or replaced values: 512 levels in all is the most.
        #expect(try JSONPatch([.add(path: .root, value: nested(512))]).apply(to: [:]) == nested(512))
        let atLimit = try JSONPatch([.add(path: JSONPointer(tokens: ["a"]), value: nested(511))]).apply(to: [:])
        #expect(try JSONParser.parse(JSONSerializer.string(atLimit)) == atLimit)
        for operation: JSONPatch.Operation in [
            .add(path: .root, value: nested(513)),
            .add(path: JSONPointer(tokens: ["a"]), value: nested(512)),
            .replace(path: JSONPointer(tokens: ["b", "0"]), value: nested(511)),
        ] {
            #expect(throws: JSONPatchError(.conflict, operationIndex: 0, pointer: operation.path.description,
                message: #"operation 0 (""# + operation.name + #""), path "# + JSONPatch.quoted(operation.path) + ": the document would nest deeper than 512 levels")) {
                try JSONPatch([operation]).apply(to: ["a": 1, "b": [0]])
            }
        }
        // Copies of a value into its own member, one level deeper each time: stopped at the limit
        // (copy i puts i + 1 levels under "/a/x", two containers deep).
        let chain = JSONPatch(Array(repeating: .copy(from: JSONPointer(tokens: ["a"]), path: JSONPointer(tokens: ["a", "x"])), count: 600))
        do {
            _ = try chain.apply(to: ["a": [:]])
            Issue.record("applied")
        } catch {
            #expect(error.message.hasSuffix("the document would nest deeper than 512 levels"), "\(error.message)")
            #expect(error.operationIndex == 510)
        }
        // A move to a deeper place is measured; a move up is not.
        let document: JSONValue = ["deep": nested(400), "b": nested(200, around: [:])]
        let down = JSONPointer(tokens: ["b"] + Array(repeating: "0", count: 200) + ["moved"])
        #expect(throws: JSONPatchError.self) {
            try JSONPatch([.move(from: JSONPointer(tokens: ["deep"]), path: down)]).apply(to: document)
        }
        let up = try JSONPatch([.move(from: JSONPointer(tokens: ["deep", "0"]), path: JSONPointer(tokens: ["top"]))]).apply(to: document)
        #expect(up["top"] == nested(399))
        #expect(try JSONPatch([.move(from: JSONPointer(tokens: ["deep"]), path: down)]).apply(to: document, limits: .init(maxDepth: 700))["b"] != nil)
    }

    @Test(arguments: ["~", "/~", "/a~", "/~2", "/~~0", "/a/~x/b", "a", "#/a"])
    func malformedEscapesInAPatchAreMalformed(pointer: String) throws {
        let patch = try JSONParser.parse(#"[{"op":"test","path":"","value":{}},{"op":"copy","from":"/a","path":"\#(pointer)"}]"#)
        do {
            _ = try JSONPatch(document: patch)
            Issue.record("read \(pointer)")
        } catch {
            #expect(error.kind == .malformed)
            #expect(error.operationIndex == 1)
            #expect(error.pointer == pointer)
            #expect(error.message.hasPrefix(#"operation 1 ("copy"): "path" "#), "\(error.message)")
            #expect(error.message.contains("is not a JSON pointer"))
        }
    }
}
