import DiscfgAPI
import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// OpenFeature's Python SDK with its OFREP provider, unchanged, reading a config's flags
/// from `discfg serve`: each type arrives as its Python type, with the reason, the variant
/// and the error code the SDK reports.
@Suite("API: the OpenFeature Python SDK reads flags over OFREP")
struct OFREPSDKTests {
    /// What the SDK must report for each evaluation: the JSON line the peer reads, and what
    /// it must print.
    struct Case {
        var input: String
        var value: JSONValue
        var pytype: String
        var reason: String
        var variant: JSONValue
        var errorCode: JSONValue = .null
    }

    static let cases: [Case] = [
        Case(input: #"{"type": "boolean", "flag": "bool-flag", "default": false, "targetingKey": "u1", "attributes": {"plan": "pro"}}"#, value: .bool(true), pytype: "bool", reason: "TARGETING_MATCH", variant: .string("on")),
        Case(input: #"{"type": "boolean", "flag": "bool-flag", "default": true, "targetingKey": "u1", "attributes": {"plan": "free"}}"#, value: .bool(false), pytype: "bool", reason: "DEFAULT", variant: .string("off")),
        Case(input: #"{"type": "string", "flag": "string-flag", "default": "none", "targetingKey": "u1", "attributes": {"email": "jane@example.org"}}"#, value: .string("#00f"), pytype: "str", reason: "TARGETING_MATCH", variant: .string("blue")),
        Case(input: #"{"type": "integer", "flag": "int-flag", "default": 0}"#, value: .number(JSONNumber(3)), pytype: "int", reason: "STATIC", variant: .string("small")),
        Case(input: #"{"type": "float", "flag": "float-flag", "default": 1.5}"#, value: .number(JSONNumber("10.0")!), pytype: "float", reason: "STATIC", variant: .string("ten")),
        Case(input: #"{"type": "object", "flag": "object-flag", "default": {}}"#, value: try! JSONParser.parse(#"{"size": 1, "ratio": 2.0, "tags": ["x"]}"#), pytype: "dict", reason: "STATIC", variant: .string("a")),
        // Errors: the caller's default, reason ERROR and the code.
        Case(input: #"{"type": "boolean", "flag": "no-such-flag", "default": true}"#, value: .bool(true), pytype: "bool", reason: "ERROR", variant: .null, errorCode: .string("FLAG_NOT_FOUND")),
        Case(input: #"{"type": "boolean", "flag": "broken-rule", "default": false}"#, value: .bool(false), pytype: "bool", reason: "ERROR", variant: .null, errorCode: .string("PARSE_ERROR")),
        Case(input: #"{"type": "boolean", "flag": "bad-variant", "default": false}"#, value: .bool(false), pytype: "bool", reason: "ERROR", variant: .null, errorCode: .string("GENERAL")),
        Case(input: #"{"type": "boolean", "flag": "bool-flag", "default": false, "attributes": {"targetingKey": 7}}"#, value: .bool(false), pytype: "bool", reason: "ERROR", variant: .null, errorCode: .string("INVALID_CONTEXT")),
        // A DISABLED flag answers no variant; provider 0.3.0 requires one, so it reports GENERAL with the caller's default.
        Case(input: #"{"type": "boolean", "flag": "off-flag", "default": false}"#, value: .bool(false), pytype: "bool", reason: "ERROR", variant: .null, errorCode: .string("GENERAL")),
        // A type the flag is not: the SDK's own TYPE_MISMATCH, with the caller's default.
        Case(input: #"{"type": "integer", "flag": "float-flag", "default": 4}"#, value: .number(JSONNumber(4)), pytype: "int", reason: "ERROR", variant: .null, errorCode: .string("TYPE_MISMATCH")),
        Case(input: #"{"type": "string", "flag": "bool-flag", "default": "x", "attributes": {"plan": "pro"}}"#, value: .string("x"), pytype: "str", reason: "ERROR", variant: .null, errorCode: .string("TYPE_MISMATCH")),
    ]

    /// Runs every case through the peer against `base` and checks each answer.
    static func check(base: String, token: String?) async throws {
        let lines = try await OpenFeaturePeer.evaluate(base: base, token: token, cases.map(\.input))
        #expect(lines.count == cases.count, "\(lines)")
        for (line, expected) in zip(lines, cases) {
            let answer = try JSONParser.parse(line)
            guard case .object(let object) = answer else {
                Issue.record("not an object: \(line)")
                continue
            }
            let cell = "\(expected.input) → \(line)"
            #expect(object["value"] == expected.value, "\(cell)")
            #expect(object["pytype"] == .string(expected.pytype), "\(cell)")
            #expect(object["reason"] == .string(expected.reason), "\(cell)")
            #expect(object["variant"] == expected.variant, "\(cell)")
            #expect(object["errorCode"] == expected.errorCode, "\(cell)")
        }
    }

    @Test("serve: boolean, string, integer, float and object flags with their types, reasons and errors")
    func serve() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            try await OFREPFixtures.seed(server.store)
            let (token, record) = try TokenFormat.generate(role: .read, scopes: [try AccessScope("demo:/flags/")], description: "sdk", now: Date())
            try await server.store.saveToken(record)
            try await Self.check(base: server.baseURL + "/v1/demo", token: token)
            // A token scoped away from /flags/: the SDK reports a general error and the default.
            let (other, otherRecord) = try TokenFormat.generate(role: .read, scopes: [try AccessScope("demo:/app/")], description: "sdk", now: Date())
            try await server.store.saveToken(otherRecord)
            let refused = try await OpenFeaturePeer.evaluate(base: server.baseURL + "/v1/demo", token: other, [Self.cases[0].input])
            #expect(refused.count == 1 && refused[0].contains(#""errorCode": "GENERAL""#) && refused[0].contains("forbidden"), "\(refused)")
        }
    }
}
