import DiscfgCore
import Foundation

/// Keeps web pages from using a server they can reach: the one decision every HTTP face
/// asks (the REST API's router and fast path, the etcd API's JSON gateway).
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
///
/// ```swift
/// let guardrail = BrowserGuard(boundHost: "127.0.0.1")
/// guardrail.verdict(method: "POST", authority: "evil.example", origin: nil, preflight: false)  // .refuse(…, status: 421)
/// ```
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

    /// What the guard decides about one request.
    public enum Verdict: Sendable, Equatable {
        /// Let it through; `corsOrigin` is the allowed origin whose CORS headers its answer
        /// carries, nil for none.
        case admit(corsOrigin: String?)
        /// A CORS preflight from an allowed origin: answered 204 with the face's CORS
        /// headers, not handed on.
        case preflight(origin: String)
        /// Refused with `error` and HTTP status `status`: 421 for a foreign `Host`, 403
        /// for a change from a foreign `Origin`.
        case refuse(DiscfgError, status: Int)
    }

    /// The verdict on a request: `method` as sent (`POST`), `authority` its `Host` (or
    /// `:authority`), `origin` its `Origin`, `preflight` whether it carries
    /// `Access-Control-Request-Method`. Host first, then Origin, as a caller is told.
    public func verdict(method: String, authority: String?, origin: String?, preflight: Bool) -> Verdict {
        if let refusal = refusal(host: authority) { return .refuse(refusal, status: Self.misdirectedStatus) }
        guard let origin = origin?.lowercased() else { return .admit(corsOrigin: nil) }
        let allowed = allowedOrigins.contains(origin)
        if allowed, method == "OPTIONS", preflight { return .preflight(origin: origin) }
        let sameOrigin = authority.map { "http://\($0.lowercased())" == origin || "https://\($0.lowercased())" == origin } ?? false
        let safe = method == "GET" || method == "HEAD" || method == "OPTIONS"
        guard sameOrigin || allowed || safe else {
            let error = DiscfgError(
                .permissionDenied,
                "requests from web pages at \(origin) may not change anything; start serve with --cors-origin \(origin) to allow that site",
                field: "Origin"
            )
            return .refuse(error, status: 403)
        }
        return .admit(corsOrigin: allowed ? origin : nil)
    }

    /// HTTP's 421 Misdirected Request, the answer to a `Host` this server is not.
    public static let misdirectedStatus = 421

    /// Why a request sent to `authority` (its `Host`) is refused, if this server does not
    /// answer to that name (answered 421). Nil for a request that names none (HTTP/1.0),
    /// which cannot be a page's.
    public func refusal(host authority: String?) -> DiscfgError? {
        guard let authority, !admitsHost(authority) else { return nil }
        return DiscfgError(.invalidArgument, "this server answers only to localhost, 127.0.0.1 or [::1], not \(authority)", field: "Host")
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
    public func admitsHost(_ authority: String) -> Bool {
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
