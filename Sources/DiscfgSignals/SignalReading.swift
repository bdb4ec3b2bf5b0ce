import DiscfgCore

/// What one reading of a deployment's signal said: the one answer the monitor acts on,
/// whichever reader gave it.
///
/// ```swift
/// let readings = await reader.read([.alarm("checkout-5xx"), .http("https://shop/health")])
/// if case .unhealthy(let reason)? = readings[.alarm("checkout-5xx")] { … roll back, saying reason … }
/// ```
public enum SignalReading: Sendable, Hashable, CustomStringConvertible {
    /// The signal says the deployment may go on.
    case healthy
    /// The signal says to roll back, and why, in one sentence.
    case unhealthy(String)
    /// The signal could not be read (AWS refused, no region, a signal read elsewhere), and why.
    case unknown(String)

    /// `healthy`, `unhealthy: REASON` or `unknown: REASON`.
    public var description: String {
        switch self {
        case .healthy: "healthy"
        case .unhealthy(let reason): "unhealthy: \(reason)"
        case .unknown(let reason): "unknown: \(reason)"
        }
    }

    /// The reason, when there is one.
    public var reason: String? {
        switch self {
        case .healthy: nil
        case .unhealthy(let reason), .unknown(let reason): reason
        }
    }
}

extension SignalReading {
    /// The `health` signal's reading from a deployment's reports added up: what the health
    /// test (``HealthTest/standard``) decides, the one reading the monitors act on and
    /// `deploy status` shows.
    public init(_ health: DeploymentHealth) {
        guard health.reporters > 0 else {
            self = .unknown("no reports yet")
            return
        }
        switch health.decision() {
        case .rollback:
            self = .unhealthy("the candidate is significantly worse: \(health.summary); it fails significantly more often than the stable version")
        case .healthy:
            self = .healthy
        case .undecided:
            self = .unknown("undecided, not enough evidence yet: \(health.summary)")
        }
    }
}
