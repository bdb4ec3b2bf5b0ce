import DiscfgCore
import Foundation

/// A running deployment's health as the API answers it: the reports added up, and what
/// the health test makes of them (``DeploymentHealth``, ``HealthTest/standard``).
///
/// ```json
/// {"reporters": 4, "latest": 1767226020000, "decision": "undecided",
///  "stable": {"requests": 900, "errors": 2, "readers": 40}, "candidate": {"requests": 100, "errors": 9, "readers": 5}}
/// ```
public struct HealthDocument: Hashable, Sendable, Codable {
    /// How many reporters reported.
    public var reporters: Int
    /// The newest report's time, unix milliseconds; absent with none.
    public var latest: Int64?
    /// `healthy`, `undecided` or `rollback`.
    public var decision: String
    /// The stable version's counts.
    public var stable: HealthReport.Counts
    /// The candidate's counts.
    public var candidate: HealthReport.Counts

    /// The document of `health`.
    public init(_ health: DeploymentHealth) {
        reporters = health.reporters
        latest = health.latest
        decision = health.decision().rawValue
        stable = health.stable
        candidate = health.candidate
    }
}
