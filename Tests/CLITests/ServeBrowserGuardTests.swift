import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Web pages cannot use `discfg serve` through any of its HTTP faces: the REST API and
/// the etcd API's JSON gateway refuse the same cross-site changes (403) and the same
/// foreign `Host` names (DNS rebinding, 421), with the same messages, and let the same
/// clients through. The requests are written byte for byte, as a browser sends them.
@Suite("serve: every HTTP face shares the same browser guards")
struct ServeBrowserGuardTests {
    /// A face of the server and its requests: a write, a delete and a read of key `k`.
    enum Face: String, CaseIterable, CustomTestStringConvertible {
        case rest, etcdGateway

        var testDescription: String { rawValue }

        /// The request line and body that set `k` to `value`.
        func write(_ value: String) -> (String, Data) {
            switch self {
            case .rest: ("PUT /v1/demo/keys/k", Data(value.utf8))
            case .etcdGateway: ("POST /v3/kv/put", Self.json(["key": "k", "value": value]))
            }
        }

        var delete: (String, Data) {
            switch self {
            case .rest: ("DELETE /v1/demo/keys/k", Data())
            case .etcdGateway: ("POST /v3/kv/deleterange", Self.json(["key": "k"]))
            }
        }

        var read: (String, Data) {
            switch self {
            case .rest: ("GET /v1/demo/keys/k", Data())
            case .etcdGateway: ("POST /v3/kv/range", Self.json(["key": "k"]))
            }
        }

        /// `k`'s value as the read answers it.
        func value(_ reply: Reply) throws -> String? {
            let object = try reply.object()
            switch self {
            case .rest:
                return (object["item"] as? [String: Any])?["value"] as? String
            case .etcdGateway:
                let kvs = object["kvs"] as? [[String: Any]] ?? []
                return (kvs.first?["value"] as? String).flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
            }
        }

        /// An etcd gateway request: its fields' values in base64, as etcd's JSON has bytes.
        private static func json(_ fields: [String: String]) -> Data {
            try! JSONSerialization.data(withJSONObject: fields.mapValues { Data($0.utf8).base64EncodedString() })
        }
    }

    /// An answer, read from the wire.
    struct Reply {
        var status: Int
        var headers: [(String, String)]
        var body: String

        init(_ text: String) {
            let parts = text.components(separatedBy: "\r\n\r\n")
            let lines = parts[0].components(separatedBy: "\r\n")
            status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            headers = lines.dropFirst().compactMap { line in
                line.firstIndex(of: ":").map { (line[..<$0].lowercased(), line[line.index(after: $0)...].trimmingCharacters(in: .whitespaces)) }
            }
            body = parts.dropFirst().joined(separator: "\r\n\r\n")
        }

        func header(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }

        func object() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "not a JSON object: \(body)")
        }

        /// The refusal's message: the REST envelope's `error.message`, the gateway's `message`.
        func message() throws -> String? {
            let object = try object()
            return (object["error"] as? [String: Any])?["message"] as? String ?? object["message"] as? String
        }
    }

    static let console = "https://console.example.com"

    @Test("a cross-site change is refused 403 and a foreign Host 421 on the REST API and the etcd JSON gateway alike; clients with no Origin, the server's own origin and --cors-origin's still work", arguments: Face.allCases)
    func sameGuards(face: Face) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let server = try cli.launch(["serve", "--port", "0", "--etcd", "127.0.0.1:0", "--cors-origin", Self.console], stdout: .discard)
        try await withServer(server) { server in
            let restPort = try await server.announcedPort()
            let etcdPort = try await server.announcedEtcdPort()
            let port = face == .rest ? restPort : etcdPort
            #expect(try await LoopbackHTTP.exchange(port: restPort, "PUT /v1/demo", body: Data()).hasPrefix("HTTP/1.1 201"))
            func send(_ request: (String, Data), host: String? = nil, _ headers: [String] = []) async throws -> Reply {
                Reply(try await LoopbackHTTP.exchange(port: port, request.0, body: request.1, headers: headers, host: host))
            }

            // Let through: etcd3gw, curl and the Swift client (no Origin), any loopback
            // name, the server's own origin, and the origin --cors-origin allows.
            let admitted: [(host: String?, headers: [String])] = [
                (nil, []), ("localhost:\(port)", []), ("[::1]:\(port)", []), ("LOCALHOST", []), ("127.0.0.1", []),
                (nil, ["Origin: http://127.0.0.1:\(port)"]), (nil, ["Origin: \(Self.console)", "Content-Type: text/plain"]),
            ]
            for (host, headers) in admitted {
                let reply = try await send(face.write("ok"), host: host, headers)
                #expect((200..<300).contains(reply.status), "Host \(host ?? "default") \(headers): \(reply.status) \(reply.body)")
                let corsOrigin = headers.contains("Origin: \(Self.console)") ? Self.console : nil
                #expect(reply.header("access-control-allow-origin") == corsOrigin, "\(headers)")
            }
            #expect(try face.value(try await send(face.read)) == "ok")

            // A page on another site: a CORS-simple text/plain POST (fetch with mode
            // 'no-cors') or any other change, refused before it runs.
            for origin in ["https://evil.example", "null", "http://127.0.0.1.evil.example", "http://localhost:1"] {
                for request in [face.write("evil"), face.delete] {
                    let reply = try await send(request, ["Origin: \(origin)", "Content-Type: text/plain"])
                    #expect(reply.status == 403, "\(origin) \(request.0): \(reply.status) \(reply.body)")
                    #expect(
                        try reply.message() == "requests from web pages at \(origin) may not change anything; start serve with --cors-origin \(origin) to allow that site",
                        "\(reply.body)"
                    )
                    #expect(reply.header("access-control-allow-origin") == nil)
                }
            }
            // DNS rebinding: a page whose own name points at 127.0.0.1 sends that name.
            for host in ["evil.example", "evil.example:\(port)", "127.0.0.1.nip.io", "10.0.0.1"] {
                for request in [face.read, face.write("evil")] {
                    let reply = try await send(request, host: host)
                    #expect(reply.status == 421, "Host \(host) \(request.0): \(reply.status) \(reply.body)")
                    #expect(try reply.message() == "this server answers only to localhost, 127.0.0.1 or [::1], not \(host)", "\(reply.body)")
                }
            }
            #expect(try face.value(try await send(face.read)) == "ok", "a refused request changed the key")

            // Preflights: the allowed origin is answered 204 with CORS headers, others get none.
            let preflight = try await send(("OPTIONS " + face.write("").0.split(separator: " ")[1], Data()), [
                "Origin: \(Self.console)", "Access-Control-Request-Method: \(face == .rest ? "PUT" : "POST")", "Access-Control-Request-Headers: content-type",
            ])
            #expect(preflight.status == 204, "\(preflight.body)")
            #expect(preflight.header("access-control-allow-origin") == Self.console)
            let foreign = try await send(("OPTIONS " + face.write("").0.split(separator: " ")[1], Data()), [
                "Origin: https://evil.example", "Access-Control-Request-Method: POST",
            ])
            #expect(foreign.header("access-control-allow-origin") == nil)
        }
    }
}
