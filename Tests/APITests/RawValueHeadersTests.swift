import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `?raw` serves a stored value from the server's own origin: a value stored as HTML or
/// SVG must not run its script there (issue 33: a browser sent to such a URL wrote a key
/// and created an admin token on a server without tokens).
@Suite("API: raw values are never active content")
struct RawValueHeadersTests {
    static let script = "<script>fetch('/v1/app/keys/pwned',{method:'PUT',body:'x'})</script>"

    /// Content types a browser would render with script, as a writer may spell them.
    static let active = [
        "text/html", "TEXT/HTML; charset=utf-8", "image/svg+xml", "application/xhtml+xml", "text/xml", "application/xml",
        "text/javascript", "application/pdf", "text/html ; q=1",
    ]
    /// Types shown as inert text or images: served inline, still with nosniff and the sandbox.
    static let inert = ["text/plain", "application/json", "application/yaml", "image/png", "application/vnd.api+json; charset=utf-8"]

    /// The script as a value of `type`: a JSON type must hold JSON, so there it is a JSON string.
    static func value(_ type: String) -> String { JSONContent.isJSON(type) ? "\"\(script)\"" : script }

    @Test("every raw answer has nosniff and a sandboxing CSP; every type not known to be inert is an attachment; the JSON form is unchanged")
    func rawHeaders() async throws {
        try await withServer(try await LiveServer.start()) { server in
            #expect(try await server.put("/v1/app", "").status == 201)
            for (index, type) in (Self.active + Self.inert).enumerated() {
                let put = try await server.put("/v1/app/keys/v\(index)", Self.value(type), headers: [("Content-Type", type)])
                #expect(put.status == 201, "\(type): \(put.text)")
            }
            for (index, type) in (Self.active + Self.inert).enumerated() {
                for query in ["?raw", "?raw=true"] {
                    let reply = try await server.get("/v1/app/keys/v\(index)\(query)")
                    #expect(reply.status == 200)
                    #expect(reply.text == Self.value(type))
                    #expect(reply.headers["Content-Type"].first == type)
                    #expect(reply.headers["X-Content-Type-Options"].first == "nosniff", "\(type)")
                    #expect(reply.headers["Content-Security-Policy"].first == "sandbox; default-src 'none'", "\(type)")
                    let disposition = reply.headers["Content-Disposition"].first
                    #expect(disposition == (Self.active.contains(type) ? "attachment" : nil), "\(type): \(disposition ?? "inline")")
                }
                // The JSON form (answered on the event loop once the view holds the
                // config) carries the value as a JSON string, never as its type.
                let json = try await server.get("/v1/app/keys/v\(index)")
                #expect(json.headers["Content-Type"].first == "application/json; charset=utf-8")
                #expect(try json.envelope().item?.value == Self.value(type))
            }
            // A value stored with no type is served as bytes to save.
            #expect(try await server.request(.PUT, "/v1/app/keys/bare", body: Data(Self.script.utf8)).status == 201)
            let bare = try await server.get("/v1/app/keys/bare?raw")
            #expect(bare.headers["X-Content-Type-Options"].first == "nosniff")
            #expect(bare.headers["Content-Security-Policy"].first == "sandbox; default-src 'none'")
            #expect(try await server.get("/v1/app/keys/pwned").status == 404, "nothing ran")
        }
    }
}
