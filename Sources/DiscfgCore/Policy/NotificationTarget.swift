import Foundation

/// Where a config's changes are announced when it runs on AWS: the stream handler sends
/// every change, once per target and in revision order, to each of the config's targets.
///
/// Set with `discfg update CFG --notify eventbridge` or `--notify https://…`.
public enum NotificationTarget: Hashable, Sendable {
    /// Amazon EventBridge `PutEvents` on a bus (name or ARN; `default` is the account's
    /// default bus), source `discfg`, detail-type `discfg.change`.
    case eventBridge(bus: String)
    /// An HTTPS (or HTTP) `POST` of the change as JSON, signed with HMAC-SHA256 in
    /// `X-Discfg-Signature` when a secret is set.
    case webhook(url: String, secret: String?)

    /// The default EventBridge bus.
    public static let defaultBus = "default"

    /// Parses `eventbridge`, `eventbridge:BUS` or an `http(s)://` URL; a webhook gets `secret`.
    public init(parsing text: String, secret: String? = nil) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let lowered = trimmed.lowercased()
        if lowered == "eventbridge" {
            self = .eventBridge(bus: Self.defaultBus)
        } else if lowered.hasPrefix("eventbridge:") {
            let bus = String(trimmed.dropFirst("eventbridge:".count))
            try Self.validate(bus: bus)
            self = .eventBridge(bus: bus)
        } else if lowered.hasPrefix("https://") || lowered.hasPrefix("http://") {
            try Self.validate(url: trimmed)
            if let secret, secret.isEmpty {
                throw DiscfgError.invalid("webhook-secret", "the webhook secret is empty")
            }
            self = .webhook(url: trimmed, secret: secret)
        } else {
            throw DiscfgError.invalid(
                "notify",
                "notification target \"\(text.debugEscaped)\" is not one of: eventbridge, eventbridge:BUS, https://URL"
            )
        }
    }

    /// How the target is named to people: the bus or the URL, never the secret.
    public var description: String {
        switch self {
        case .eventBridge(let bus): "eventbridge:\(bus)"
        case .webhook(let url, let secret): secret == nil ? url : "\(url) (signed)"
        }
    }

    /// The target with its secret replaced by a marker, for callers who may not see it.
    public var redacted: NotificationTarget {
        guard case .webhook(let url, let secret?) = self else { return self }
        return .webhook(url: url, secret: secret.isEmpty ? secret : Self.redactedSecret)
    }

    /// What a hidden secret reads as.
    public static let redactedSecret = "(hidden)"

    private static func validate(bus: String) throws {
        let allowed = bus.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-/:".contains($0)) }
        guard !bus.isEmpty, bus.utf8.count <= 1600, allowed else {
            throw DiscfgError.invalid("notify", "\"\(bus.debugEscaped)\" is not an EventBridge bus name or ARN")
        }
    }

    private static func validate(url text: String) throws {
        guard text.utf8.count <= 2048, let url = URL(string: text), let host = url.host, !host.isEmpty,
              ["http", "https"].contains(url.scheme?.lowercased() ?? "")
        else {
            throw DiscfgError.invalid("notify", "webhook \"\(text.debugEscaped)\" is not an http(s) URL with a host")
        }
    }
}

extension NotificationTarget: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, bus, url, secret
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "eventbridge":
            let bus = try container.decodeIfPresent(String.self, forKey: .bus) ?? Self.defaultBus
            try Self.validate(bus: bus)
            self = .eventBridge(bus: bus)
        case "webhook":
            let url = try container.decode(String.self, forKey: .url)
            try Self.validate(url: url)
            let secret = try container.decodeIfPresent(String.self, forKey: .secret)
            if secret?.isEmpty == true { throw DiscfgError.invalid("webhook-secret", "the webhook secret is empty") }
            self = .webhook(url: url, secret: secret)
        case let other:
            throw DiscfgError.invalid("notify", "notification type \"\(other.debugEscaped)\" is not eventbridge or webhook")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .eventBridge(let bus):
            try container.encode("eventbridge", forKey: .type)
            try container.encode(bus, forKey: .bus)
        case .webhook(let url, let secret):
            try container.encode("webhook", forKey: .type)
            try container.encode(url, forKey: .url)
            try container.encodeIfPresent(secret, forKey: .secret)
        }
    }
}
