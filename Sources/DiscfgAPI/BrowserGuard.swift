import DiscfgNetwork
import DiscfgCore
import Foundation
import Hummingbird

/// Keeps web pages from using a `discfg serve` they can reach.
///
/// - **Host**: on a loopback server the `Host` header must name this machine
///   (`localhost`, `127.0.0.1`, `[::1]` or the bound address); anything else is 421.
///   A page on another site that re-points its own name at 127.0.0.1 (DNS rebinding)
///   sends its own name and is refused.
/// - **Origin**: a request that carries an `Origin` other than the server's own and
///   the origins allowed with `--cors-origin` may not change anything (403); reads get
///   no CORS headers, so the page cannot see them. Allowed origins get CORS answers,
///   preflights included.
///
/// Clients that are not browsers send no `Origin` and are not affected.
public struct BrowserGuard: Sendable {
    /// Origins (`https://console.example.com`) whose pages may call the API.
    public var allowedOrigins: Set<String>
    /// Host names the `Host` header may carry; nil accepts any (a non-loopback bind,
    /// whose names the server cannot know).
    public var allowedHosts: Set<String>? {
        didSet { allowedHostBytes = Self.bytes(of: allowedHosts) }
    }

    /// ``allowedHosts``' bytes, which every request on loopback is compared with.
    private var allowedHostBytes: [[UInt8]]

    private static func bytes(of hosts: Set<String>?) -> [[UInt8]] {
        hosts.map { $0.map { Array($0.utf8) } } ?? []
    }

    /// The guard for a server bound to `host`.
    public init(boundHost host: String, allowedOrigins: [String] = []) {
        self.allowedOrigins = Set(allowedOrigins.map { $0.lowercased() })
        let bound = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let hosts: Set<String>? = Loopback.contains(host: bound) ? ["localhost", "127.0.0.1", "::1", bound] : nil
        allowedHosts = hosts
        allowedHostBytes = Self.bytes(of: hosts)
    }

    /// Checks `--cors-origin` values: `scheme://host[:port]`, nothing after.
    public static func validateOrigin(_ text: String) throws -> String {
        let lowered = text.lowercased()
        guard let url = URLParts(lowered), ["http", "https"].contains(url.scheme), !url.host.isEmpty, url.rest.isEmpty else {
            throw DiscfgError.invalid("--cors-origin", "\"\(text)\" is not an origin such as https://console.example.com (scheme, host and port only)")
        }
        return lowered
    }

    /// Whether `authority` (a `Host` header) names this server: always, unless the server
    /// is bound to loopback, where only loopback names do. Cheap for the usual
    /// `name:port`, as every request on loopback asks.
    func admitsHost(_ authority: String) -> Bool {
        guard let allowedHosts else { return true }
        var authority = authority
        let admitted: Bool? = authority.withUTF8 { bytes in
            var hostEnd = 0
            while hostEnd < bytes.count, bytes[hostEnd] != UInt8(ascii: ":") { hostEnd += 1 }
            // Bracketed or bare IPv6 names: the general reading.
            if bytes.first == UInt8(ascii: "[") { return nil }
            var index = hostEnd + 1
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: ":") { return nil }
                index += 1
            }
            for allowed in allowedHostBytes where allowed.count == hostEnd {
                var same = true
                for offset in 0..<hostEnd {
                    let byte = bytes[offset]
                    let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
                    if lowered != allowed[offset] {
                        same = false
                        break
                    }
                }
                if same { return true }
            }
            return false
        }
        return admitted ?? allowedHosts.contains(Self.hostName(authority))
    }

    /// The answer to a request sent to `authority` (its `Host`), if this server does not
    /// answer to that name: 421, naming the names it does answer to. Nil for a request
    /// that names none (HTTP/1.0), which cannot be a page's.
    func refusal(host authority: String?) -> Admission.Refusal? {
        guard let authority, !admitsHost(authority) else { return nil }
        return Admission.Refusal(
            DiscfgError(.invalidArgument, "this server answers only to localhost, 127.0.0.1 or [::1], not \(authority)", field: "Host"),
            status: .misdirectedRequest
        )
    }

    /// The host name in a `Host` header value: `[::1]:8899` → `::1`, `Example:80` → `example`.
    static func hostName(_ header: String) -> String {
        let lowered = header.lowercased()
        if lowered.hasPrefix("["), let end = lowered.firstIndex(of: "]") {
            return String(lowered[lowered.index(after: lowered.startIndex)..<end])
        }
        if let colon = lowered.lastIndex(of: ":"), lowered.firstIndex(of: ":") == colon {
            return String(lowered[..<colon])
        }
        return lowered
    }

    /// `scheme://authority` and what follows it.
    struct URLParts {
        var scheme: String
        var host: String
        var rest: Substring

        init?(_ text: String) {
            guard let separator = text.range(of: "://") else { return nil }
            scheme = String(text[..<separator.lowerBound])
            let afterScheme = text[separator.upperBound...]
            let end = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
            host = BrowserGuard.hostName(String(afterScheme[..<end]))
            rest = afterScheme[end...]
        }
    }
}

/// ``BrowserGuard`` as router middleware.
struct BrowserGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let guardrail: BrowserGuard

    static var corsMethods: String { "GET, PUT, POST, PATCH, DELETE" }
    static var corsHeaders: String { "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, Accept" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // Every path, the API's and the rest (console, metrics, unknown paths); the API's
        // routes ask again through ``Admission``, which answers with this same refusal.
        if let refusal = guardrail.refusal(host: request.head.authority) {
            let parts = refusal.parts(action: request.method.rawValue.lowercased())
            return APIResponse.bytes(parts.body, contentType: APIResponse.jsonContentType, status: parts.status, headers: parts.headers)
        }
        guard let origin = request.headers[.origin]?.lowercased() else { return try await next(request, context) }
        let sameOrigin = request.head.authority.map { "http://\($0.lowercased())" == origin || "https://\($0.lowercased())" == origin } ?? false
        let allowed = guardrail.allowedOrigins.contains(origin)
        if allowed, request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers = Self.corsHeaders(origin)
            headers[.accessControlAllowMethods] = Self.corsMethods
            headers[.accessControlAllowHeaders] = Self.corsHeaders
            headers[.accessControlMaxAge] = "600"
            return Response(status: .noContent, headers: headers)
        }
        let safe = request.method == .get || request.method == .head || request.method == .options
        guard sameOrigin || allowed || safe else {
            return APIResponse.error(
                DiscfgError(
                    .permissionDenied,
                    "requests from web pages at \(origin) may not change anything; start serve with --cors-origin \(origin) to allow that site",
                    field: "Origin"
                ),
                action: request.method.rawValue.lowercased()
            )
        }
        var response = try await next(request, context)
        if allowed {
            for field in Self.corsHeaders(origin) { response.headers[field.name] = field.value }
        }
        return response
    }

    private static func corsHeaders(_ origin: String) -> HTTPFields {
        [.accessControlAllowOrigin: origin, .vary: "Origin", .accessControlExposeHeaders: "ETag, Location"]
    }
}
