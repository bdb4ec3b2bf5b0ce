import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The built `discfg serve` (no tokens: any browser on the host may call it) never serves
/// a stored value as active content from its own origin.
@Suite("CLI: serve's raw values")
struct ServeRawValueTests {
    @Test("serve answers ?raw of an HTML and an SVG value with nosniff, a sandboxing CSP and as an attachment")
    func activeValues() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve()
        try await withServer(server) { _ in
            #expect(try await LoopbackHTTP.exchange(port: port, "PUT /v1/app", body: Data()).hasPrefix("HTTP/1.1 201"))
            let script = Data("<svg xmlns='http://www.w3.org/2000/svg'><script>fetch('/v1/admin/tokens',{method:'POST'})</script></svg>".utf8)
            for type in ["text/html", "image/svg+xml"] {
                let put = try await LoopbackHTTP.exchange(port: port, "PUT /v1/app/keys/page", body: script, headers: ["Content-Type: \(type)"])
                #expect(put.hasPrefix("HTTP/1.1 20"), "\(put.prefix(200))")
                let reply = try await LoopbackHTTP.exchange(port: port, "GET /v1/app/keys/page?raw", body: Data())
                let head = reply.components(separatedBy: "\r\n\r\n").first?.lowercased() ?? ""
                #expect(head.hasPrefix("http/1.1 200"), "\(reply.prefix(300))")
                #expect(head.contains("\r\ncontent-type: \(type)\r\n"), "\(head)")
                #expect(head.contains("\r\nx-content-type-options: nosniff\r\n"), "\(type): \(head)")
                #expect(head.contains("\r\ncontent-security-policy: sandbox; default-src 'none'\r\n"), "\(type): \(head)")
                #expect(head.contains("\r\ncontent-disposition: attachment\r\n"), "\(type): \(head)")
            }
        }
    }
}
