import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOHTTP1
import Testing

@Suite("API: bad requests get the right 4xx and a JSON error naming the problem")
struct BadRequestTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var method: HTTPMethod
        var path: String
        var body: String?
        var headers: [(String, String)] = []
        var status: Int
        var code: DiscfgError.Code
        var field: String?
        var testDescription: String { "\(method) \(path)" }
    }

    static let cases: [Case] = [
        Case(method: .PUT, path: "/v1/bad%20name", body: "", status: 400, code: .invalidArgument, field: "config"),
        Case(method: .GET, path: "/v1/nope", status: 404, code: .configNotFound, field: "config"),
        Case(method: .GET, path: "/v1/c/keys/missing", status: 404, code: .keyNotFound, field: "key"),
        Case(method: .PUT, path: "/v1/c/keys/a//b", body: "x", status: 400, code: .invalidArgument, field: "key"),
        Case(method: .PUT, path: "/v1/c/keys/a/%2E%2E/b", body: "x", status: 400, code: .invalidArgument, field: "key"),
        Case(method: .PUT, path: "/v1/c/keys/ctl%01", body: "x", status: 400, code: .invalidArgument, field: "key"),
        Case(method: .PUT, path: "/v1/c/keys/k?ttl=abc", body: "x", status: 400, code: .invalidArgument, field: "ttl"),
        Case(method: .PUT, path: "/v1/c/keys/k?ttl=0", body: "x", status: 400, code: .invalidArgument, field: "ttl"),
        Case(method: .PUT, path: "/v1/c/keys/k", body: "x", headers: [("If-Match", "abc")], status: 400, code: .invalidArgument, field: "If-Match"),
        Case(method: .PUT, path: "/v1/c/keys/k", body: "x", headers: [("If-None-Match", "\"3\"")], status: 400, code: .invalidArgument, field: "If-None-Match"),
        Case(method: .PUT, path: "/v1/c/keys/k?prevVersion=-1", body: "x", status: 400, code: .invalidArgument, field: "prevVersion"),
        Case(method: .PUT, path: "/v1/c/keys/k?prevExist=maybe", body: "x", status: 400, code: .invalidArgument, field: "prevExist"),
        Case(method: .PUT, path: "/v1/c/keys/k", body: "x", headers: [("Content-Type", "not a type")], status: 400, code: .invalidArgument, field: "contentType"),
        Case(method: .GET, path: "/v1/c/keys/k?revision=x", status: 400, code: .invalidArgument, field: "revision"),
        Case(method: .GET, path: "/v1/c/keys/k?revision=999", status: 400, code: .invalidArgument, field: "revision"),
        Case(method: .GET, path: "/v1/c/keys?limit=0", status: 400, code: .invalidArgument, field: "limit"),
        Case(method: .GET, path: "/v1/c/keys?limit=5000", status: 400, code: .invalidArgument, field: "limit"),
        Case(method: .GET, path: "/v1/c/watch?fromRevision=abc", status: 400, code: .invalidArgument, field: "fromRevision"),
        Case(method: .GET, path: "/v1/c/watch", headers: [("Accept", "text/event-stream"), ("Last-Event-ID", "x")], status: 400, code: .invalidArgument, field: "Last-Event-ID"),
        Case(method: .GET, path: "/v1/c/export?format=xml", status: 400, code: .invalidArgument, field: "format"),
        Case(method: .POST, path: "/v1/c/import", body: "{not json", status: 400, code: .invalidArgument, field: "file"),
        Case(method: .POST, path: "/v1/c/import", body: "[1,2]", status: 400, code: .invalidArgument, field: "file"),
        Case(method: .PUT, path: "/v1/d", body: "{\"history\": 5}", status: 400, code: .invalidArgument, field: "body"),
        Case(method: .PUT, path: "/v1/d", body: "{\"history\": \"soon\"}", status: 400, code: .invalidArgument, field: "history"),
        Case(method: .PATCH, path: "/v1/c", body: #"{"notify": [{"type": "webhook", "url": "https://10.1.2.3/hook"}]}"#, status: 400, code: .invalidArgument, field: "notify"),
        Case(method: .PATCH, path: "/v1/c", body: #"{"notify": [{"type": "webhook", "url": "http://hooks.example.com/"}]}"#, status: 400, code: .invalidArgument, field: "notify"),
        Case(method: .PUT, path: "/v1/c", body: "", status: 409, code: .configExists, field: "config"),
        Case(method: .DELETE, path: "/v1/c/keys/k?recursive&prevVersion=1", status: 400, code: .invalidArgument, field: "recursive"),
        Case(method: .POST, path: "/v1/c/keys/k", body: "x", status: 405, code: .invalidArgument, field: "method"),
        Case(method: .POST, path: "/v1/c/import?format=yaml", body: billionLaughs, status: 400, code: .invalidArgument, field: "file"),
        Case(method: .POST, path: "/v1/c/import?format=yaml", body: "a: .nan\n", status: 400, code: .invalidArgument, field: "file"),
        Case(method: .POST, path: "/v1/c/import", body: String(repeating: "[", count: 100_000), status: 400, code: .invalidArgument, field: "file"),
        Case(method: .DELETE, path: "/v1/c/keys?recursive", status: 400, code: .invalidArgument, field: "prefix"),
        Case(method: .DELETE, path: "/v1/c/keys?prefix=/k", status: 400, code: .invalidArgument, field: "prefix"),
        Case(method: .DELETE, path: "/v1/c/keys/k?recursive&prefix=/", status: 400, code: .invalidArgument, field: "prefix"),
        Case(method: .GET, path: "/v1/c/watch?timeout=0", headers: [("Last-Event-ID", "18446744073709551615")], status: 400, code: .invalidArgument, field: "Last-Event-ID"),
        Case(method: .GET, path: "/v1/c/watch?fromRevision=9223372036854775808&timeout=0", status: 400, code: .invalidArgument, field: "fromRevision"),
        Case(method: .GET, path: "/v2/anything", status: 404, code: .keyNotFound, field: "path"),
    ]

    /// Nine levels of ten aliases: 1 KB that stands for 10^9 strings.
    static let billionLaughs = (["a0: &a0 lol"] + (1...9).map { level in
        "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]"
    } + ["/bomb: *a9"]).joined(separator: "\n")

    @Test("rejected with a JSON error, nothing changed", arguments: cases)
    func rejected(_ testCase: Case) async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/k", "original")
            let reply = try await server.request(testCase.method, testCase.path, body: testCase.body.map { Data($0.utf8) }, headers: testCase.headers)
            #expect(reply.status == testCase.status, "\(reply.text)")
            #expect(reply.headers["Content-Type"].first?.hasPrefix("application/json") == true)
            let error = try reply.envelope().error
            #expect(error?.code == testCase.code, "\(reply.text)")
            #expect(error?.field == testCase.field, "\(reply.text)")
            #expect(error?.message.isEmpty == false)
            #expect(try await server.get("/v1/c").envelope().revision == 1)
            #expect(try await server.get("/v1/c/keys/k").envelope().item?.value == "original")
        }
    }

    @Test("values over 256 KiB get 413, whether Content-Length says so or not; exactly 256 KiB is accepted")
    func bodyLimit() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            let over = try await server.request(.PUT, "/v1/c/keys/big", body: Data(repeating: 0x61, count: 256 * 1024 + 1))
            #expect(over.status == 413)
            #expect(try over.envelope().error?.code == .tooLarge)
            #expect(try await server.request(.PUT, "/v1/c/keys/big", body: Data(repeating: 0x61, count: 256 * 1024)).status == 201)
        }
    }

    @Test("405 names the allowed methods")
    func methodNotAllowed() async throws {
        try await withServer(try await LiveServer.start()) { server in
            let reply = try await server.request(.PATCH, "/v1/configs")
            #expect(reply.status == 405)
            #expect(reply.headers["Allow"].first == "GET")
        }
    }
}

@Suite("API: random requests never get a 5xx")
struct FuzzTests {
    @Test("400 random paths, query strings, headers and bodies")
    func randomRequests() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/a/b", "v")
            var random = SeededGenerator(state: 20261121)
            let segments = ["v1", "c", "keys", "history", "watch", "export", "import", "configs", "a", "b", "..", ".", "%00", "%2F", "%ZZ", "é", "", "x y", "*", "~", "nope", "openapi.yaml"]
            let queries = ["", "?recursive", "?limit=-1", "?limit=99999999999999999999", "?revision=0", "?cursor=%FF", "?prefix=..", "?ttl=1e9", "?format=json", "?raw", "?prevExist=", "?fromRevision=0&timeout=0", "?key=", "?%%%"]
            let headerChoices: [(String, String)] = [("If-Match", "*"), ("If-Match", "\"x\""), ("If-None-Match", "*, \"1\""), ("Content-Type", "🙂"), ("Authorization", "Bearer x"), ("Last-Event-ID", "99"), ("Accept", "text/event-stream")]
            let methods: [HTTPMethod] = [.GET, .PUT, .POST, .PATCH, .DELETE]
            for round in 0..<400 {
                let depth = Int.random(in: 1...5, using: &random)
                let path = "/" + (0..<depth).map { _ in segments.randomElement(using: &random)! }.joined(separator: "/")
                let query = queries.randomElement(using: &random)!
                var headers = [headerChoices.randomElement(using: &random)!]
                if headers[0].1 == "text/event-stream" { headers = [] }
                let body = Data((0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
                let method = methods.randomElement(using: &random)!
                let reply = try await server.request(method, path + query, body: body, headers: headers)
                #expect(reply.status < 500, "round \(round): \(method) \(path)\(query) → \(reply.status) \(reply.text)")
            }
        }
    }
}
