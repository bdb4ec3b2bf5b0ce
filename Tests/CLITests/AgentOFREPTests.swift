import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// OFREP on `discfg agent`: the same routes as serve, evaluated from the agent's copy; a
/// change of a flag set reaches bulk evaluations and the event stream within an interval;
/// AppConfig's agent route answers a flag set as a profile; OpenFeature's Python SDK reads
/// every type through it.
@Suite("CLI: the agent answers OFREP from its copy")
struct AgentOFREPTests {
    static func post(_ port: Int, _ path: String, _ body: String, headers: [String] = []) async throws -> (status: Int, head: String, body: String) {
        let reply = try await LoopbackHTTP.exchange(port: port, "POST /v1/demo/ofrep/v1/evaluate/flags" + path, body: Data(body.utf8), headers: headers + ["Content-Type: application/json"])
        let parts = reply.components(separatedBy: "\r\n\r\n")
        let head = parts[0]
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, head, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    static func header(_ name: String, in head: String) -> String? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }

    @Test("single and bulk evaluations, 304 until a flag changes, refetchEvaluation on the stream, AppConfig's agent route, the Python SDK", .timeLimit(.minutes(2)))
    func agent() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "demo").status == 0)
        for (key, text) in [("/flags/web", OFREPFlagSets.web), ("/flags/ops", OFREPFlagSets.ops)] {
            let set = try await cli.run("set", "demo", key, text, "--content-type", "application/json")
            #expect(set.status == 0, "\(set.stderr)")
        }
        let (agent, port) = try await cli.agent()
        defer { Task { await agent.kill(SIGTERM) } }

        let float = try await Self.post(port, "/float-flag", #"{"context": {}}"#)
        #expect(float.status == 200)
        #expect(float.body == #"{"key":"float-flag","reason":"STATIC","variant":"ten","value":10.0,"metadata":{"flagSetId":"web","version":2}}"# + "\n")
        #expect(try await Self.post(port, "/bool-flag", #"{"context": {"plan": "pro"}}"#).body.contains(#""reason":"TARGETING_MATCH","variant":"on","value":true"#))
        #expect(try await Self.post(port, "/nope", "{}").status == 404)
        #expect(try await Self.post(port, "/broken-rule", "{}").body.contains(#""errorCode":"PARSE_ERROR""#))
        #expect(try await Self.post(port, "/bool-flag", "{").status == 400)

        let bulk = try await Self.post(port, "", #"{"context": {"targetingKey": "u1"}}"#)
        #expect(bulk.status == 200)
        #expect(bulk.body.contains(#""eventStreams":[{"type":"sse","endpoint":{"requestUri":"/v1/demo/ofrep/v1/events"}}]"#))
        let tag = try #require(Self.header("ETag", in: bulk.head))
        #expect(try await Self.post(port, "", #"{"context": {"targetingKey": "u1"}}"#, headers: ["If-None-Match: W/\(tag)"]).status == 304)

        // The event stream, open before the change.
        let stream = try LoopbackHTTP(port: port)
        defer { stream.close() }
        try stream.send(Data("GET /v1/demo/ofrep/v1/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n".utf8))
        var events = ""
        while !events.contains(": refetchEvaluation") {
            let more = await stream.read(waiting: 10)
            if more.isEmpty { break }
            events += more
        }
        #expect(events.hasPrefix("HTTP/1.1 200"), "\(events)")

        let set = try await cli.run("set", "demo", "/flags/web", OFREPFlagSets.web.replacingOccurrences(of: "10.0", with: "12.5"), "--content-type", "application/json")
        #expect(set.status == 0, "\(set.stderr)")
        // Within an interval (1 s): the stream announces it, and the bulk answer is new.
        while !events.contains(#"data: {"type":"refetchEvaluation"}"#) {
            let more = await stream.read(waiting: 10)
            if more.isEmpty { break }
            events += more
        }
        #expect(events.contains("event: message\n" + #"data: {"type":"refetchEvaluation"}"#), "\(events)")
        let changed = try await Self.post(port, "", #"{"context": {"targetingKey": "u1"}}"#, headers: ["If-None-Match: \(tag)"])
        #expect(changed.status == 200)
        #expect(changed.body.contains(#""value":12.5"#))

        // AppConfig's agent route: the flag set /flags/web as the profile "web".
        func appConfig(_ query: String, _ headers: [String]) async throws -> (status: Int, body: String) {
            let reply = try await LoopbackHTTP.exchange(port: port, "GET /applications/demo/environments/prod/configurations/web" + query, body: Data(), headers: headers)
            let parts = reply.components(separatedBy: "\r\n\r\n")
            return (Int(parts[0].split(separator: " ").dropFirst().first ?? "") ?? 0, parts.dropFirst().joined(separator: "\r\n\r\n"))
        }
        let one = try await appConfig("?flag=string-flag", ["Context: email=jane@example.org"])
        #expect(one.status == 200 && one.body == ##"{"string-flag":{"enabled":true,"value":"#00f","_variant":"blue"}}"## + "\n", "\(one)")
        let two = try await appConfig("?flag=bool-flag&flag=object-flag&flag=off-flag", ["Context: plan=pro, country=NZ", "Entity-Id: u1"])
        #expect(two.body == #"{"bool-flag":{"enabled":true,"_variant":"on"},"object-flag":{"enabled":true,"size":1,"ratio":2.0,"tags":["x"],"_variant":"a"},"off-flag":{"enabled":false}}"# + "\n", "\(two)")
        let every = try await appConfig("", [])
        #expect(every.status == 200 && every.body.contains(#""float-flag":{"enabled":true,"value":12.5,"_variant":"ten"}"#), "\(every)")
        #expect(try await appConfig("?flag=nope", []).status == 404)
        #expect(try await appConfig("?flag=bool-flag", ["Context: plan"]).status == 400)
        let otherProfile = try await LoopbackHTTP.exchange(port: port, "GET /applications/demo/environments/prod/configurations/missing", body: Data())
        #expect(otherProfile.hasPrefix("HTTP/1.1 404"), "\(otherProfile)")

        // OpenFeature's Python SDK through the agent.
        let answers = try await OpenFeaturePeer.evaluate(base: "http://127.0.0.1:\(port)/v1/demo", token: nil, [
            #"{"type": "boolean", "flag": "bool-flag", "default": false, "targetingKey": "u1", "attributes": {"plan": "pro"}}"#,
            #"{"type": "string", "flag": "string-flag", "default": "x", "targetingKey": "u1", "attributes": {"email": "a@example.org"}}"#,
            #"{"type": "integer", "flag": "int-flag", "default": 0}"#,
            #"{"type": "float", "flag": "float-flag", "default": 0.5}"#,
            #"{"type": "object", "flag": "object-flag", "default": {}}"#,
            #"{"type": "boolean", "flag": "no-such-flag", "default": true}"#,
        ])
        let expected: [(value: String, pytype: String, reason: String)] = [
            ("true", "bool", "TARGETING_MATCH"), (##""#00f""##, "str", "TARGETING_MATCH"), ("3", "int", "STATIC"),
            ("12.5", "float", "STATIC"), (#"{"size": 1, "ratio": 2.0, "tags": ["x"]}"#, "dict", "STATIC"), ("true", "bool", "ERROR"),
        ]
        #expect(answers.count == expected.count, "\(answers)")
        for (line, want) in zip(answers, expected) {
            guard case .object(let answer) = try JSONParser.parse(line) else { continue }
            #expect(answer["value"] == (try JSONParser.parse(want.value)), "\(line)")
            #expect(answer["pytype"] == .string(want.pytype) && answer["reason"] == .string(want.reason), "\(line)")
        }
        #expect(answers.last?.contains(#""errorCode": "FLAG_NOT_FOUND""#) == true)
    }
}
