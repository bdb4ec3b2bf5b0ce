import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where webhooks may point. A webhook is a request the stream function makes on a
/// config writer's say-so, so by default it goes only to public HTTPS hosts: never to
/// this machine, the private network, link-local addresses or the cloud metadata
/// service (server-side request forgery).
///
/// The check runs where a target is set (CLI and API) and again just before each
/// delivery, on every address the host name resolves to then.
public struct WebhookPolicy: Sendable, Hashable {
    /// Allow `http://` as well as `https://`.
    public var allowHTTP: Bool
    /// Allow loopback, private, link-local and other non-public addresses.
    public var allowPrivate: Bool

    /// HTTPS to public addresses only.
    public static let strict = WebhookPolicy(allowHTTP: false, allowPrivate: false)

    /// Creates a policy.
    public init(allowHTTP: Bool = false, allowPrivate: Bool = false) {
        self.allowHTTP = allowHTTP
        self.allowPrivate = allowPrivate
    }

    /// Reads `http`, `private` or both (comma-separated) from a setting such as
    /// `DISCFG_WEBHOOK_ALLOW`; empty or absent is ``strict``.
    public init(allowing text: String?, field: String) throws {
        self.init()
        for part in (text ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            switch part {
            case "http": allowHTTP = true
            case "private": allowPrivate = true
            default: throw DiscfgError.invalid(field, "\(field) may hold http, private or both, not \"\(part)\"")
            }
        }
    }

    /// Checks a webhook URL's scheme and host as written.
    /// - Throws: `invalidArgument` (field `notify`) saying what is not allowed and how to allow it.
    public func check(url text: String) throws {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw DiscfgError.invalid("notify", "webhook \"\(text.debugEscaped)\" is not an http(s) URL with a host")
        }
        if scheme != "https", !(scheme == "http" && allowHTTP) {
            throw DiscfgError.invalid("notify", "webhook \(text) is not https; plain http needs --allow-http-webhooks (DISCFG_WEBHOOK_ALLOW=http on the function)")
        }
        guard !allowPrivate else { return }
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]."))
        if name == "localhost" || name.hasSuffix(".localhost") || name.hasSuffix(".internal") || name.hasSuffix(".local") {
            throw Self.privateTarget(text, what: host)
        }
        if let address = IPAddress(name), !address.isPublic {
            throw Self.privateTarget(text, what: host)
        }
    }

    /// Checks the addresses a webhook's host resolves to now.
    public func check(addresses: [IPAddress], of url: String) throws {
        guard !allowPrivate else { return }
        if let blocked = addresses.first(where: { !$0.isPublic }) {
            throw Self.privateTarget(url, what: "\(blocked)")
        }
    }

    private static func privateTarget(_ url: String, what: String) -> DiscfgError {
        DiscfgError.invalid(
            "notify",
            "webhook \(url) points at \(what), which is not a public address (loopback, private, link-local or metadata); that needs --allow-private-webhooks (DISCFG_WEBHOOK_ALLOW=private on the function)"
        )
    }
}

extension ConfigSettingsPatch {
    /// Checks every webhook the patch sets against `policy`.
    public func check(_ policy: WebhookPolicy) throws {
        for case .webhook(let url, _) in notify ?? [] { try policy.check(url: url) }
    }
}

/// An IPv4 or IPv6 address, and whether it is on the public internet.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Parses a literal such as `10.0.0.1` or `fe80::1`; nil for anything else.
    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// An address from its bytes (4 or 16).
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the address is routable on the public internet: not loopback, private,
    /// shared (CGNAT), link-local (cloud metadata lives there), multicast, reserved or
    /// unspecified; IPv4 inside IPv6 (mapped, NAT64) is judged as IPv4.
    public var isPublic: Bool {
        if bytes.count == 4 { return Self.isPublicV4(bytes) }
        guard bytes.count == 16 else { return false }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Self.isPublicV4(Array(bytes[12...])) }
        if bytes[0..<12] == [0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0][...] { return Self.isPublicV4(Array(bytes[12...])) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return false }  // :: and ::1
        if bytes[0] & 0xFE == 0xFC { return false }  // fc00::/7 unique local, fd00:ec2::254 among them
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0x80 { return false }  // fe80::/10 link-local
        if bytes[0] == 0xFF { return false }  // multicast
        if bytes[0] == 0x20, bytes[1] == 0x01, bytes[2] == 0x0D, bytes[3] == 0xB8 { return false }  // documentation
        return true
    }

    private static func isPublicV4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _): return false
        case (100, 64...127): return false  // shared address space
        case (169, 254): return false  // link-local, the metadata service
        case (172, 16...31), (192, 168): return false
        case (192, 0) where b[2] == 0 || b[2] == 2: return false
        case (198, 18...19): return false
        case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return false
        case (224...255, _): return false  // multicast, reserved, broadcast
        default: return true
        }
    }
}
