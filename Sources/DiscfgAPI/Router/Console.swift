import DiscfgAPIAssets
import DiscfgCore
import Foundation
import HTTPTypes
import Hummingbird

/// The web console: plain HTML, CSS and JavaScript modules from `console/`, embedded
/// in the binary (`ConsoleFiles`, in `DiscfgAPIAssets`) and served at `/ui/`. It calls
/// the REST API on the same origin with the bearer token its user enters, so it needs
/// nothing the API does not already offer, and works wherever the API is served
/// (`discfg serve`, the Lambda function).
///
/// Safe by construction: every answer carries a strict `Content-Security-Policy` (the
/// console's own script and style only, no inline script or eval, requests to this
/// origin only, no framing), and the console renders values as text. The page itself is
/// revalidated on every load (`no-cache` with an `ETag`); it names its script and style,
/// and the script its modules, with the version of the files (`{{version}}` in any file
/// is replaced by it), so those are cached for a year and a new binary's console is
/// never mixed with an old one's.
struct Console: Sendable {
    struct File: Sendable {
        let body: ByteBuffer
        let contentType: String
        /// The file's own version: a hash of its bytes, quoted.
        let etag: String
    }

    /// A hash of all the files: the `v` their page names them with.
    let version: String
    private let files: [String: File]

    /// The console embedded in this binary.
    static let embedded = Console(ConsoleFiles.texts)

    static let securityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    init(_ texts: [(name: String, text: String)]) {
        var hash = FNV1a()
        for (name, text) in texts {
            hash.add(name)
            hash.add(text)
        }
        let version = hash.hex
        self.version = version
        var files: [String: File] = [:]
        for (name, text) in texts {
            let served = text.replacingOccurrences(of: "{{version}}", with: version)
            var fileHash = FNV1a()
            fileHash.add(served)
            files[name] = File(body: ByteBuffer(string: served), contentType: Self.contentType(of: name), etag: "\"\(fileHash.hex)\"")
        }
        self.files = files
    }

    /// Adds `/ui` (a redirect), `/ui/` and its files, for GET and HEAD.
    func register<Context: RequestContext>(on router: Router<Context>) {
        for method in [HTTPRequest.Method.get, .head] {
            // The router takes /ui and /ui/ for one path; only /ui/ is the page, so its
            // relative links resolve inside it.
            router.on("/ui", method: method) { request, _ in
                guard request.uri.path.hasSuffix("/") else {
                    return Response(status: .permanentRedirect, headers: [.location: "/ui/"])
                }
                return respond("index.html", request)
            }
            router.on("/ui/:file", method: method) { request, context in
                respond(context.parameters.get("file") ?? "", request)
            }
        }
    }

    /// A file with its caching and security headers, 304 when the client has it, or a
    /// 404 naming what is there.
    func respond(_ name: String, _ request: Request) -> Response {
        guard let file = files[name] else {
            var response = APIResponse.error(
                DiscfgError(.keyNotFound, "the console has no file \(name); it is at /ui/", field: "path"), action: "console"
            )
            response.headers[.contentSecurityPolicy] = Self.securityPolicy
            return response
        }
        var headers: HTTPFields = [
            .eTag: file.etag,
            .contentSecurityPolicy: Self.securityPolicy,
            .xContentTypeOptions: "nosniff",
            .referrerPolicy: "no-referrer",
            .crossOriginOpenerPolicy: "same-origin",
        ]
        // The page is checked on every load; its script and style, named with the
        // version of all the files, are kept for a year.
        let pinned = name != "index.html" && request.uri.queryParameters.get("v") == version
        headers[.cacheControl] = pinned ? "public, max-age=31536000, immutable" : "no-cache"
        if let match = request.headers[.ifNoneMatch], ETag.listMatches(match, file.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = file.contentType
        let body = request.method == .head ? ByteBuffer() : file.body
        if request.method == .head { headers[.contentLength] = String(file.body.readableBytes) }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    private static func contentType(of name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        return "application/octet-stream"
    }
}

/// 64-bit FNV-1a: a stable hash of the console's files for their versions and ETags
/// (they change when a file does; nothing is secret about them).
private struct FNV1a {
    private var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ text: String) {
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        value ^= 0xff
        value &*= 0x100_0000_01b3
    }

    var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
    static let crossOriginOpenerPolicy = Self("Cross-Origin-Opener-Policy")!
}
