import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A JSON patch is applied while the store's writer is held, so what one patch may cost is
/// bounded: its count of operations, checked as it is read, and the work of its array edits.
@Suite("API: JSON patch bounds")
struct PatchBoundsTests {
    /// A JSON patch of `count` operations made by `operation` from each index.
    static func patch(_ count: Int, _ operation: (Int) -> String) -> String {
        "[" + (0..<count).map(operation).joined(separator: ",") + "]"
    }

    @Test("a JSON patch of more than 1,000 operations is refused with 400 naming the limit and its count, over PATCH and in a txn, and changes nothing; 1,000 are applied")
    func operationCount() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            let set = try await server.put("/v1/c/keys/settings", #"{"a": 0, "b": 0}"#, headers: JSONRoutesTests.json)
            #expect(set.status == 201)

            let over = Self.patch(Limits.maxPatchOperations + 1) { #"{"op": "replace", "path": "/a", "value": \#($0 + 1)}"# }
            let refused = try await JSONRoutesTests.patch(server, "/v1/c/keys/settings", over, JSONRoutesTests.jsonPatch)
            #expect(refused.status == 400, "\(refused.text)")
            let error = try #require(try refused.envelope().error)
            #expect(error.code == .invalidArgument && error.field == "patch")
            #expect(error.message.contains("at most 1000 operations") && error.message.contains("1001"), "\(error.message)")

            // The patch that held the writer for seconds: 13,700 moves in 512 KiB.
            let moves = Self.patch(13_700) { $0 % 2 == 0 ? #"{"op":"move","from":"/a","path":"/b"}"# : #"{"op":"move","from":"/b","path":"/a"}"# }
            let movesRefused = try await JSONRoutesTests.patch(server, "/v1/c/keys/settings", moves, JSONRoutesTests.jsonPatch)
            #expect(movesRefused.status == 400 && movesRefused.text.contains("13700"), "\(movesRefused.text.prefix(300))")

            let txn = #"{"success": [{"op": "patch", "key": "/settings", "patch": \#(over)}]}"#
            let txnRefused = try await server.request(.POST, "/v1/c/txn", body: Data(txn.utf8), headers: JSONRoutesTests.json)
            #expect(txnRefused.status == 400 && txnRefused.text.contains("at most 1000 operations"), "\(txnRefused.text.prefix(300))")

            #expect(try await JSONRoutesTests.stored(server, "/settings") == #"{"a": 0, "b": 0}"#, "nothing was changed")
            #expect(try await server.get("/v1/c/keys/settings").envelope().item?.modRevision == set.envelope().revision)

            let limit = Self.patch(Limits.maxPatchOperations) { #"{"op": "replace", "path": "/a", "value": \#($0 + 1)}"# }
            let applied = try await JSONRoutesTests.patch(server, "/v1/c/keys/settings", limit, JSONRoutesTests.jsonPatch)
            #expect(applied.status == 200, "\(applied.text.prefix(300))")
            #expect(try await JSONRoutesTests.stored(server, "/settings") == #"{"a":1000,"b":0}"#)
        }
    }

    @Test("a JSON patch whose copies duplicate more than 131,072 values is refused with 409 naming the limit and changes nothing; a copy within it is applied")
    func copiedValues() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            // 40,000 numbers: an array of 40,001 values, 80 KB.
            let list = #"{"a":["# + Array(repeating: "1", count: 40_000).joined(separator: ",") + "]}"
            #expect(try await server.put("/v1/c/keys/list", list, headers: JSONRoutesTests.json).status == 201)

            // Four copies: 160,004 values. Without the limit the patch ran whole, to be refused as too large (413).
            let copies = Self.patch(4) { #"{"op": "copy", "from": "/a", "path": "/c\#($0)"}"# }
            let refused = try await JSONRoutesTests.patch(server, "/v1/c/keys/list", copies, JSONRoutesTests.jsonPatch)
            #expect(refused.status == 409, "\(refused.text.prefix(300))")
            let error = try #require(try refused.envelope().error)
            #expect(error.code == .patchFailed && error.message.contains("\(Limits.maxPatchCopiedValues) values"), "\(error.message)")
            #expect(try await JSONRoutesTests.stored(server, "/list") == list, "nothing was changed")

            let one = try await JSONRoutesTests.patch(server, "/v1/c/keys/list", #"[{"op": "copy", "from": "/a", "path": "/b"}]"#, JSONRoutesTests.jsonPatch)
            #expect(one.status == 200, "\(one.text.prefix(300))")
        }
    }
}
