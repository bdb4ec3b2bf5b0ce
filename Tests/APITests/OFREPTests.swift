import AsyncHTTPClient
@testable import DiscfgAPI
import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// OFREP on `discfg serve`: single and bulk evaluation, every error code, entity tags,
/// the refetch event stream, and access, against a real server on loopback.
@Suite("API: OFREP evaluates a config's flags")
struct OFREPTests {
    static let base = "/v1/demo/ofrep/v1/evaluate/flags"

    static func evaluate(_ server: LiveServer, _ flag: String, _ body: String, headers: [(String, String)] = []) async throws -> LiveServer.Reply {
        try await server.request(.POST, base + "/" + flag, body: Data(body.utf8), headers: headers)
    }

    @Test("single evaluations: booleans, strings, integers, floats and objects, exact, with reasons, variants and metadata")
    func single() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await OFREPFixtures.seed(server.store)
            let cases: [(flag: String, context: String, text: String)] = [
                ("bool-flag", #"{"plan": "pro"}"#, #"{"key":"bool-flag","reason":"TARGETING_MATCH","variant":"on","value":true,"metadata":{"flagSetId":"web","version":2}}"#),
                ("bool-flag", #"{"plan": "free"}"#, #"{"key":"bool-flag","reason":"DEFAULT","variant":"off","value":false,"metadata":{"flagSetId":"web","version":2}}"#),
                ("string-flag", #"{"email": "jane@example.org"}"#, ##"{"key":"string-flag","reason":"TARGETING_MATCH","variant":"blue","value":"#00f","metadata":{"flagSetId":"web","version":2}}"##),
                ("int-flag", "{}", #"{"key":"int-flag","reason":"STATIC","variant":"small","value":3,"metadata":{"flagSetId":"web","version":2}}"#),
                ("float-flag", "{}", #"{"key":"float-flag","reason":"STATIC","variant":"ten","value":10.0,"metadata":{"flagSetId":"web","version":2}}"#),
                ("object-flag", "{}", #"{"key":"object-flag","reason":"STATIC","variant":"a","value":{"size":1,"ratio":2.0,"tags":["x"]},"metadata":{"flagSetId":"web","version":2,"owner":"web"}}"#),
                // The caller's own default: no value, no variant.
                ("off-flag", "{}", #"{"key":"off-flag","reason":"DISABLED","metadata":{"flagSetId":"web","version":2}}"#),
            ]
            for (flag, context, text) in cases {
                let reply = try await Self.evaluate(server, flag, #"{"context": \#(context)}"#)
                #expect(reply.status == 200, "\(flag): \(reply.text)")
                #expect(reply.text == text + "\n", "\(flag) with \(context)")
                #expect(reply.headers["Content-Type"].first?.hasPrefix("application/json") == true)
            }
            // A key sent with percent-escapes is the key they spell.
            let escaped = try await Self.evaluate(server, "int%2Dflag", "{}")
            #expect(escaped.status == 200 && escaped.text.hasPrefix(#"{"key":"int-flag","reason":"STATIC""#), "\(escaped.text)")
            // No context at all is the empty context, as the SDKs send it.
            #expect(try await Self.evaluate(server, "int-flag", "").status == 200)
            #expect(try await Self.evaluate(server, "int-flag", "{}").status == 200)
        }
    }

    @Test("every error code: FLAG_NOT_FOUND 404, PARSE_ERROR, GENERAL and INVALID_CONTEXT 400, each with its key and one sentence")
    func errors() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await OFREPFixtures.seed(server.store)
            let cases: [(flag: String, body: String, status: Int, code: String, words: String)] = [
                ("no-such-flag", #"{"context": {}}"#, 404, "FLAG_NOT_FOUND", "not defined"),
                ("broken-rule", #"{"context": {}}"#, 400, "PARSE_ERROR", "no_such_operator"),
                ("bad-variant", #"{"context": {}}"#, 400, "GENERAL", "variant"),
                ("bool-flag", #"{"context": {"targetingKey": 5}}"#, 400, "INVALID_CONTEXT", "targetingKey"),
                // Bad bodies: refused before any flag is read.
                ("bool-flag", "not json", 400, "PARSE_ERROR", "not JSON"),
                ("bool-flag", #"{"context": [1]}"#, 400, "INVALID_CONTEXT", "context must be an object"),
                ("bool-flag", #"{"context": "u1"}"#, 400, "INVALID_CONTEXT", "not a string"),
                ("bool-flag", #"{"context": null}"#, 400, "INVALID_CONTEXT", "not null"),
                ("bool-flag", "[1, 2]", 400, "INVALID_CONTEXT", "must be an object"),
                ("bool-flag", #"{"context": {"a": "# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}}", 400, "PARSE_ERROR", "not JSON"),
                ("bool-flag", #"{"context": {"a": ""# + String(repeating: "x", count: 300_000) + #""}}"#, 400, "INVALID_CONTEXT", "limit"),
            ]
            for (flag, body, status, code, words) in cases {
                let reply = try await Self.evaluate(server, flag, body)
                let cell = "\(flag) \(body.prefix(60)): \(reply.status) \(reply.text.prefix(300))"
                #expect(reply.status == status, "\(cell)")
                let object = try OFREPFixtures.object(reply.body)
                #expect(object["key"] == .string(flag), "\(cell)")
                #expect(object["errorCode"] == .string(code), "\(cell)")
                guard case .string(let details)? = object["errorDetails"] else {
                    Issue.record("no errorDetails: \(cell)")
                    continue
                }
                #expect(details.contains(words) && !details.contains("\n") && details.count < 400, "\(cell)")
                #expect(object["value"] == nil && object["variant"] == nil, "\(cell)")
            }
        }
    }

    @Test("bulk: every flag with per-flag failures; ETag over the answer: 304 when unchanged (lists, weak tags, *), 200 after a context or a flag change")
    func bulk() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await OFREPFixtures.seed(server.store)
            let pro = Data(#"{"context": {"targetingKey": "u1", "plan": "pro"}}"#.utf8)
            let first = try await server.request(.POST, Self.base, body: pro)
            #expect(first.status == 200, "\(first.text)")
            let body = try OFREPFixtures.object(first.body)
            guard case .array(let flags)? = body["flags"] else {
                Issue.record("no flags: \(first.text)")
                return
            }
            let keys = flags.compactMap { flag -> String? in
                guard case .object(let o) = flag, case .string(let key)? = o["key"] else { return nil }
                return key
            }
            #expect(keys == ["bad-variant", "bool-flag", "broken-rule", "float-flag", "int-flag", "object-flag", "off-flag", "string-flag"])
            #expect(first.text.contains(#"{"key":"bool-flag","reason":"TARGETING_MATCH","variant":"on","value":true"#))
            #expect(first.text.contains(#""value":10.0"#))
            #expect(first.text.contains(#"{"key":"broken-rule","errorCode":"PARSE_ERROR""#))
            #expect(first.text.contains(#""eventStreams":[{"type":"sse","endpoint":{"requestUri":"/v1/demo/ofrep/v1/events"}}]"#))
            let tag = try #require(first.headers["ETag"].first)
            #expect(tag.hasPrefix("\"") && tag.hasSuffix("\""))

            for header in [tag, "W/" + tag, "\"other\", " + tag, "*"] {
                let again = try await server.request(.POST, Self.base, body: pro, headers: [("If-None-Match", header)])
                #expect(again.status == 304, "If-None-Match: \(header): \(again.status)")
                #expect(again.body.isEmpty)
                #expect(again.headers["ETag"].first == tag)
            }
            // A change outside /flags/ changes no answer.
            _ = try await server.store.set(try Key("/app/port"), to: Data("9090".utf8), in: OFREPFixtures.demo, options: SetOptions())
            #expect(try await server.request(.POST, Self.base, body: pro, headers: [("If-None-Match", tag)]).status == 304)
            // Another context: another answer.
            let free = try await server.request(.POST, Self.base, body: Data(#"{"context": {"targetingKey": "u1", "plan": "free"}}"#.utf8), headers: [("If-None-Match", tag)])
            #expect(free.status == 200)
            #expect(free.headers["ETag"].first != tag)
            // A flag changed: another answer.
            try await OFREPFixtures.write(OFREPFixtures.web.replacingOccurrences(of: "10.0", with: "20.0"), at: OFREPFixtures.webKey, in: server.store)
            let changed = try await server.request(.POST, Self.base, body: pro, headers: [("If-None-Match", tag)])
            #expect(changed.status == 200)
            #expect(changed.text.contains(#""value":20.0"#))
            #expect(changed.headers["ETag"].first != tag)
            // A bad body is refused whole, without a key.
            let bad = try await server.request(.POST, Self.base, body: Data("{".utf8))
            #expect(bad.status == 400)
            let refusal = try OFREPFixtures.object(bad.body)
            #expect(refusal["errorCode"] == .string("PARSE_ERROR") && refusal["key"] == nil, "\(bad.text)")
        }
    }

    @Test("the event stream sends refetchEvaluation for a change of a flag set, with its revision as id, and nothing for other keys")
    func events() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await OFREPFixtures.seed(server.store)
            let request = HTTPClientRequest(url: server.baseURL + "/v1/demo/ofrep/v1/events")
            let response = try await server.client.execute(request, timeout: .seconds(30))
            #expect(response.status.code == 200)
            #expect(response.headers["Content-Type"].first?.hasPrefix("text/event-stream") == true)
            var iterator = response.body.makeAsyncIterator()
            var text = ""
            while !text.contains(": refetchEvaluation") {
                guard let buffer = try await iterator.next() else { break }
                text += String(buffer: buffer)
            }
            // The stream is open: a key outside /flags/, then a flag set.
            _ = try await server.store.set(try Key("/app/port"), to: Data("1".utf8), in: OFREPFixtures.demo, options: SetOptions())
            try await OFREPFixtures.write(OFREPFixtures.ops, at: OFREPFixtures.opsKey, in: server.store)
            let revision = try #require(try await server.store.get(OFREPFixtures.opsKey, in: OFREPFixtures.demo)?.modRevision)
            while !text.contains("data: {\"type\":\"refetchEvaluation\"}") {
                guard let buffer = try await iterator.next() else { break }
                text += String(buffer: buffer)
            }
            #expect(text.contains("id: \(revision.rawValue)\nevent: message\ndata: {\"type\":\"refetchEvaluation\"}\n\n"), "\(text)")
            #expect(!text.contains("id: \(revision.rawValue - 1)\n"), "the change outside /flags/ was announced: \(text)")
        }
    }

    @Test("access: 401 without a token, 403 for a token scoped away from /flags/, 200 for one scoped to it")
    func access() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            try await OFREPFixtures.seed(server.store)
            func token(_ scopes: [String]) async throws -> String {
                let (token, record) = try TokenFormat.generate(role: .read, scopes: scopes.map { try AccessScope($0) }, description: "t", now: Date())
                try await server.store.saveToken(record)
                return token
            }
            let flags = try await token(["demo:/flags/"])
            let app = try await token(["demo:/app/"])
            let body = #"{"context": {}}"#
            #expect(try await Self.evaluate(server, "int-flag", body).status == 401)
            let refused = try await Self.evaluate(server, "int-flag", body, headers: [("Authorization", "Bearer \(app)")])
            #expect(refused.status == 403)
            #expect(refused.text.contains("demo:/app/"), "\(refused.text)")
            #expect(try await server.request(.POST, Self.base, body: Data(body.utf8), headers: [("Authorization", "Bearer \(app)")]).status == 403)
            #expect(try await server.request(.GET, "/v1/demo/ofrep/v1/events", headers: [("Authorization", "Bearer \(app)")]).status == 403)
            #expect(try await Self.evaluate(server, "int-flag", body, headers: [("Authorization", "Bearer \(flags)")]).status == 200)
            #expect(try await server.request(.POST, Self.base, body: Data(body.utf8), headers: [("Authorization", "Bearer \(flags)")]).status == 200)
        }
    }

    /// A store that throttles every listing, as DynamoDB does past its capacity.
    struct ThrottledListings: ForwardingStore {
        let forwardee: any ConfigStore
        func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage {
            throw DiscfgError(.throttled, "the table's read capacity is exhausted")
        }
    }

    @Test("a throttled store answers 429 with Retry-After, which OFREP providers wait out")
    func throttled() async throws {
        try await withServer(try await LiveServer.start(serving: { ThrottledListings(forwardee: $0) })) { server in
            try await OFREPFixtures.seed(server.store)
            for reply in [try await Self.evaluate(server, "int-flag", "{}"), try await server.request(.POST, Self.base, body: Data("{}".utf8))] {
                #expect(reply.status == 429, "\(reply.text)")
                #expect(reply.headers["Retry-After"].first == "1")
                #expect(!reply.text.contains("capacity"), "the store's words stay in the log: \(reply.text)")
            }
        }
    }

    @Test("the catalog is parsed once per change of the flag sets, not per evaluation")
    func catalogCache() async throws {
        let store = MemoryStore()
        try await OFREPFixtures.seed(store)
        let cache = FlagCatalogCache()
        for _ in 0..<3 {
            let items = try await store.items(in: OFREPFixtures.demo, under: ConfigFlags.prefix).items
            #expect(try cache.catalog(items, in: OFREPFixtures.demo).entries.count == 8)
        }
        #expect(cache.parseCount == 1)
        _ = try await store.set(try Key("/app/port"), to: Data("1".utf8), in: OFREPFixtures.demo, options: SetOptions())
        _ = try cache.catalog(try await store.items(in: OFREPFixtures.demo, under: ConfigFlags.prefix).items, in: OFREPFixtures.demo)
        #expect(cache.parseCount == 1)
        try await OFREPFixtures.write(OFREPFixtures.ops, at: OFREPFixtures.opsKey, in: store)
        _ = try cache.catalog(try await store.items(in: OFREPFixtures.demo, under: ConfigFlags.prefix).items, in: OFREPFixtures.demo)
        #expect(cache.parseCount == 2)
    }
}
