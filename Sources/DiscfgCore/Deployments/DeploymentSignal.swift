/// What a deployment watches to roll itself back (`--rollback-on`), written as text:
/// `alarm:NAME`, `http:URL` or `health`.
///
/// - `alarm:NAME`: a CloudWatch alarm; ALARM (or INSUFFICIENT_DATA, as AppConfig reads
///   it) rolls the deployment back. NAME is a CloudWatch alarm name: 1 to 255 characters,
///   no control characters.
/// - `http:URL`: a health URL over `http` or `https`; an answer that is not 2xx rolls it
///   back. `http:https://h/health` and plain `https://h/health` are the same signal.
/// - `health`: the errors applications report against the version they read; a
///   candidate significantly worse than the stable version (``HealthTest``) rolls it back.
///
/// ```swift
/// try DeploymentSignal("alarm:checkout-5xx")   // .alarm("checkout-5xx")
/// DeploymentSignal.health.text                 // "health"
/// ```
public enum DeploymentSignal: Hashable, Sendable, CustomStringConvertible {
    /// A CloudWatch alarm, by name.
    case alarm(String)
    /// A health URL, `http://` or `https://`.
    case http(String)
    /// Error counts per version that agents report.
    case health

    /// The longest alarm name CloudWatch takes.
    public static let maxAlarmNameLength = 255
    /// The longest health URL taken, in bytes.
    public static let maxURLBytes = 2048

    /// Reads a signal as `--rollback-on` takes it.
    /// - Throws: `invalidArgument` (`--rollback-on`) in one sentence saying what is wrong.
    public init(_ text: String) throws {
        let shown = "\"\(String(text.prefix(60)).debugEscaped)\(text.count > 60 ? "…" : "")\""
        let lowered = text.lowercased()
        if lowered == "health" {
            self = .health
        } else if lowered.hasPrefix("alarm:") {
            let name = String(text.dropFirst("alarm:".count))
            guard (1...Self.maxAlarmNameLength).contains(name.count) else {
                throw DiscfgError.invalid("--rollback-on", "--rollback-on \(shown) needs an alarm name of 1 to \(Self.maxAlarmNameLength) characters after alarm:")
            }
            guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw DiscfgError.invalid("--rollback-on", "--rollback-on \(shown) has a control character in the alarm name")
            }
            self = .alarm(name)
        } else if lowered.hasPrefix("http:") || lowered.hasPrefix("https:") {
            // `http:URL`, or a URL alone (`http://…` would otherwise read as `http:` + `//…`).
            let rest = text.dropFirst("http:".count)
            let url = lowered.hasPrefix("https:") || rest.hasPrefix("//") ? text : String(rest)
            let scheme = url.lowercased()
            guard scheme.hasPrefix("http://") || scheme.hasPrefix("https://"), url.utf8.count <= Self.maxURLBytes else {
                throw DiscfgError.invalid("--rollback-on", "--rollback-on \(shown) needs an http:// or https:// URL of at most \(Self.maxURLBytes) bytes after http:")
            }
            let host = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false).dropFirst(2).first ?? ""
            guard !host.isEmpty, !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
                throw DiscfgError.invalid("--rollback-on", "--rollback-on \(shown) is not a URL with a host and no spaces or control characters")
            }
            self = .http(url)
        } else {
            throw DiscfgError.invalid("--rollback-on", "--rollback-on \(shown) is not a signal; use alarm:NAME, http:URL or health")
        }
    }

    /// The signal as ``init(_:)`` reads it and the record keeps it.
    public var text: String {
        switch self {
        case .alarm(let name): "alarm:\(name)"
        case .http(let url): "http:\(url)"
        case .health: "health"
        }
    }

    public var description: String { text }
}

extension DeploymentSignal: Codable {
    public init(from decoder: any Decoder) throws {
        let text: String
        do {
            text = try decoder.singleValueContainer().decode(String.self)
        } catch {
            throw DiscfgError.invalid("signals", "a signal must be a string such as alarm:NAME, http:URL or health")
        }
        do {
            try self.init(text)
        } catch var error as DiscfgError {
            error.field = "signals"
            throw error
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
