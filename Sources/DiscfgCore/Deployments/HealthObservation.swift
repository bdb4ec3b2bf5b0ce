/// What an application reports against the version of a deployment it read
/// (`POST /v1/{config}/health`): how many requests it served with that version and how
/// many of them failed, since its last report.
///
/// ```json
/// {"deployment": "3f9c0a1b2c3d4e5f", "version": "candidate", "requests": 120, "errors": 3}
/// ```
///
/// `deployment` may be left out while one deployment runs in the config; `version` is the
/// last word of the `Discfg-Deployment` header the read was answered with. `requests`
/// counts every request, failed or not; a report of `errors` alone counts them as requests.
public struct HealthObservation: Hashable, Sendable, Decodable {
    /// The deployment, or nil for the config's only running one.
    public var deployment: String?
    /// Whether the version read was the candidate.
    public var candidate: Bool
    /// Requests served with it.
    public var requests: UInt64
    /// Failed requests among them.
    public var errors: UInt64

    /// The most either count may be in one report: far past any real burst, and safe to
    /// add up for centuries of reports.
    public static let maxCount: UInt64 = 1 << 40

    private enum Field: String, CodingKey, CaseIterable { case deployment, version, requests, errors }

    public init(from decoder: any Decoder) throws {
        let fields = try decoder.strictFields(Field.self, of: "a health report", at: "health")
        deployment = try fields.optional(String.self, .deployment, at: "health")
        if let deployment { try Deployment.checkID(deployment) }
        switch try fields.required(String.self, .version, at: "health") {
        case "candidate": candidate = true
        case "stable": candidate = false
        case let other:
            throw DiscfgError.invalid("health.version", "health.version is candidate or stable (the last word of the Discfg-Deployment header), not \"\(String(other.prefix(40)).debugEscaped)\"")
        }
        errors = try fields.optional(UInt64.self, .errors, at: "health") ?? 0
        requests = try fields.optional(UInt64.self, .requests, at: "health") ?? errors
        guard requests <= Self.maxCount, errors <= Self.maxCount else {
            throw DiscfgError.invalid("health", "a health report counts at most \(Self.maxCount) requests or errors at once; report more often")
        }
        guard errors <= requests else {
            throw DiscfgError.invalid("health.errors", "health.errors (\(errors)) exceeds health.requests (\(requests)); count every request, failed or not")
        }
        guard requests > 0 else {
            throw DiscfgError.invalid("health", "a health report counts no request; give requests, errors or both")
        }
    }
}
