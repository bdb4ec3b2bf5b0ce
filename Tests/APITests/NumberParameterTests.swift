import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOHTTP1
import Testing
import Yams

/// Every integer parameter that `docs/openapi.yaml` declares, sent with the numbers that
/// break unchecked code: each out of the documented range is a 400 naming the
/// parameter, each in range anything but a 5xx, and the server answers after every one.
@Suite("API: every numeric parameter is read within its documented bounds")
struct NumberParameterTests {
    /// One integer parameter of one operation, with its documented range.
    struct Parameter: Sendable, CustomStringConvertible {
        var method: HTTPMethod
        var path: String
        var name: String
        var location: String
        var range: ClosedRange<Int64>
        var description: String { "\(method) \(path) \(location) \(name)" }
    }

    static let probes = [
        "0", "-1", "1", "9223372036854775806", "9223372036854775807", "9223372036854775808",
        "18446744073709551615", "18446744073709551616", "1000000000000000000000000000000",
        "abc", "", "1e3", "+5", "0x10", " 7", "٣",
    ]

    static let parameters: [Parameter] = (try? integerParameters()) ?? []

    @Test("the document declares bounds for every integer parameter")
    func documented() throws {
        let found = try Self.integerParameters()
        #expect(found.count >= 13, "found \(found.map(\.description))")
    }

    @Test("out of range is a 400 naming the parameter; in range never a 5xx", arguments: parameters)
    func probed(_ parameter: Parameter) async throws {
        try await withServer(try await LiveServer.start()) { server in
            #expect(try await server.put("/v1/c", "").status == 201)
            #expect(try await server.put("/v1/c/keys/k", "v").status == 201)
            for probe in Self.probes {
                // HTTP drops the blanks around a header's value.
                if parameter.location == "header", probe.hasPrefix(" ") { continue }
                let inRange = Int64(probe).map(parameter.range.contains) == true && probe.allSatisfy(\.isASCII) && !probe.hasPrefix("+") && !probe.hasPrefix(" ")
                var query = [(String, String)]()
                var headers = [(String, String)]()
                if parameter.location == "header" { headers.append((parameter.name, probe)) } else { query.append((parameter.name, probe)) }
                // A watch must not wait: an in-range fromRevision asks for the future.
                if parameter.path.hasSuffix("/watch"), parameter.name != "timeout" { query.append(("timeout", "0")) }
                let path = parameter.path.replacingOccurrences(of: "{config}", with: "c").replacingOccurrences(of: "{key}", with: "k")
                    .replacingOccurrences(of: "{id}", with: "00000000000000a1").replacingOccurrences(of: "{action}", with: "pause")
                let queryText = query.map { "\($0.0)=\(Self.encoded($0.1))" }.joined(separator: "&")
                let body = parameter.method == .PUT ? Data("x".utf8) : nil
                let reply = try await server.request(parameter.method, path + (queryText.isEmpty ? "" : "?" + queryText), body: body, headers: headers)
                let context = "\(parameter) = \"\(probe)\": \(reply.status) \(reply.text)"
                #expect(reply.status < 500, "\(context)")
                if inRange {
                    #expect(try reply.status == 400 ? reply.envelope().error?.message.contains("whole number") != true : true, "\(context)")
                } else {
                    #expect(reply.status == 400, "\(context)")
                    #expect(try reply.envelope().error?.field == parameter.name, "\(context)")
                }
                #expect(try await server.get("/v1/c").status == 200, "the server stopped answering after \(context)")
            }
        }
    }

    private static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// The integer parameters of every operation, path-level ones included, `$ref`s
    /// followed; a parameter without both bounds is a failure of the document.
    static func integerParameters() throws -> [Parameter] {
        let text = try String(contentsOf: OpenAPITests.documentPath, encoding: .utf8)
        guard let document = try Yams.load(yaml: text) as? [String: Any],
              let paths = document["paths"] as? [String: Any],
              let components = document["components"] as? [String: Any]
        else { return [] }
        let shared = components["parameters"] as? [String: Any] ?? [:]
        func resolve(_ raw: Any) -> [String: Any]? {
            guard let parameter = raw as? [String: Any] else { return nil }
            guard let reference = parameter["$ref"] as? String else { return parameter }
            return shared[String(reference.split(separator: "/").last ?? "")] as? [String: Any]
        }
        var found: [Parameter] = []
        for (path, rawItem) in paths.sorted(by: { $0.key < $1.key }) {
            guard let item = rawItem as? [String: Any] else { continue }
            let common = (item["parameters"] as? [Any] ?? []).compactMap(resolve)
            for method in ["get", "put", "post", "patch", "delete"] {
                guard let operation = item[method] as? [String: Any] else { continue }
                for parameter in common + (operation["parameters"] as? [Any] ?? []).compactMap(resolve) {
                    guard let schema = parameter["schema"] as? [String: Any], schema["type"] as? String == "integer",
                          let name = parameter["name"] as? String, let location = parameter["in"] as? String
                    else { continue }
                    let low = (schema["minimum"] as? Int).map(Int64.init) ?? .min
                    let high = (schema["maximum"] as? Int).map(Int64.init) ?? .max
                    #expect(schema["minimum"] != nil && schema["maximum"] != nil, "\(method) \(path) \(name) has no minimum or maximum")
                    found.append(Parameter(method: HTTPMethod(rawValue: method.uppercased()), path: path, name: name, location: location, range: low...high))
                }
            }
        }
        return found
    }
}
