/// How a deployment's share of entities grows: by equal steps or by doubling, one step
/// per interval, then a bake before it is complete.
///
/// Shares are in basis points (1/100 of a percent, 10,000 = everyone), so `--step 12.5`
/// is exact and every evaluator computes the same integers. Step `k` (1…``stepCount``)
/// exposes
/// - linear: min(10,000, k·step);
/// - exponential: min(10,000, step·2^(k−1)), AppConfig's G·2^N,
///
/// and ``stepCount`` is the first `k` whose share reaches 10,000. Step `k` holds over
/// [(k−1)·interval, k·interval) of deployment time (paused time does not count), so the
/// deployment is DEPLOYING for stepCount·interval, then BAKING for ``bakeSeconds``, then
/// COMPLETE. Linear 20 % every 6 minutes exposes 20 % at once, 100 % from minute 24, and
/// deploys for 30 minutes.
///
/// ```swift
/// let canary = try DeploymentStrategy.predefined(named: "AppConfig.Canary10Percent20Minutes")
/// canary.shares                         // [1000, 2000, 4000, 8000, 10000]
/// try DeploymentStrategy(growth: .linear, stepBasisPoints: 3000, intervalSeconds: 60, bakeSeconds: 0).shares
///                                       // [3000, 6000, 9000, 10000]
/// ```
public struct DeploymentStrategy: Hashable, Sendable {
    /// How the share grows from one step to the next.
    public enum Growth: String, Hashable, Sendable, Codable, CaseIterable {
        /// By ``DeploymentStrategy/stepBasisPoints`` each step.
        case linear
        /// Doubling each step, from ``DeploymentStrategy/stepBasisPoints``.
        case exponential
    }

    /// Everyone, in basis points.
    public static let fullShare = 10_000
    /// The longest interval between steps: 30 days.
    public static let maxIntervalSeconds: Int64 = 30 * 86_400
    /// The longest bake: 7 days.
    public static let maxBakeSeconds: Int64 = 7 * 86_400
    /// The longest a rollback may take to reach no one: 7 days.
    public static let maxRollbackSeconds: Int64 = 7 * 86_400

    /// How the share grows.
    public let growth: Growth
    /// The first step's share, and for linear growth each step's increase (1…10,000).
    public let stepBasisPoints: Int
    /// How long each step holds, in seconds; 0 only when the first step is everyone.
    public let intervalSeconds: Int64
    /// How long the deployment stays BAKING at 100 % before it is COMPLETE, in seconds.
    public let bakeSeconds: Int64
    /// How long a rollback takes to bring the share back to 0, in seconds, stepping down
    /// through the shares it went up by; 0 (the default) takes the candidate from
    /// everyone at once.
    public let rollbackSeconds: Int64
    /// The predefined strategy's name (``predefined``) when this is one; nil for a custom one.
    public let name: String?
    /// Each step's share in basis points, step 1 first; the last is 10,000.
    public let shares: [Int]

    /// A custom strategy, checked.
    /// - Throws: `invalidArgument` naming the CLI flag at fault (`--step`, `--interval`,
    ///   `--bake`, `--rollback-over`).
    public init(growth: Growth, stepBasisPoints: Int, intervalSeconds: Int64, bakeSeconds: Int64, rollbackSeconds: Int64 = 0) throws {
        try self.init(growth: growth, stepBasisPoints: stepBasisPoints, intervalSeconds: intervalSeconds, bakeSeconds: bakeSeconds, rollbackSeconds: rollbackSeconds, name: nil)
    }

    init(growth: Growth, stepBasisPoints: Int, intervalSeconds: Int64, bakeSeconds: Int64, rollbackSeconds: Int64, name: String?) throws {
        guard (1...Self.fullShare).contains(stepBasisPoints) else {
            throw DiscfgError.invalid("--step", "the step must be from 0.01 % to 100 % (1 to 10000 basis points), got \(stepBasisPoints) basis points")
        }
        guard (0...Self.maxIntervalSeconds).contains(intervalSeconds) else {
            throw DiscfgError.invalid("--interval", "the interval must be from 0 to 30 days (\(Self.maxIntervalSeconds) seconds), got \(intervalSeconds) seconds")
        }
        guard intervalSeconds > 0 || stepBasisPoints == Self.fullShare else {
            throw DiscfgError.invalid("--interval", "an interval of 0 deploys to everyone at once, so the step must be 100 %; give an interval for steps of \(Self.percent(stepBasisPoints))")
        }
        guard (0...Self.maxBakeSeconds).contains(bakeSeconds) else {
            throw DiscfgError.invalid("--bake", "the bake must be from 0 to 7 days (\(Self.maxBakeSeconds) seconds), got \(bakeSeconds) seconds")
        }
        guard (0...Self.maxRollbackSeconds).contains(rollbackSeconds) else {
            throw DiscfgError.invalid("--rollback-over", "a rollback must take from 0 to 7 days (\(Self.maxRollbackSeconds) seconds), got \(rollbackSeconds) seconds")
        }
        self.growth = growth
        self.stepBasisPoints = stepBasisPoints
        self.intervalSeconds = intervalSeconds
        self.bakeSeconds = bakeSeconds
        self.rollbackSeconds = rollbackSeconds
        self.name = name
        var shares: [Int] = []
        var share = 0
        while share < Self.fullShare {
            switch growth {
            case .linear: share = min(Self.fullShare, share + stepBasisPoints)
            case .exponential: share = shares.isEmpty ? stepBasisPoints : min(Self.fullShare, share * 2)
            }
            shares.append(share)
        }
        self.shares = shares
    }

    /// How many steps the deployment takes to reach everyone.
    public var stepCount: Int { shares.count }

    /// How long the steps last together, in milliseconds: stepCount·interval.
    public var deployingMilliseconds: Int64 { Int64(stepCount) * intervalSeconds * 1000 }

    /// The same strategy taking `seconds` to roll back (a predefined one keeps its name:
    /// the name is the schedule forward).
    /// - Throws: `invalidArgument` (`--rollback-over`) past ``maxRollbackSeconds``.
    public func withRollbackSeconds(_ seconds: Int64) throws -> DeploymentStrategy {
        try DeploymentStrategy(
            growth: growth, stepBasisPoints: stepBasisPoints, intervalSeconds: intervalSeconds, bakeSeconds: bakeSeconds, rollbackSeconds: seconds, name: name
        )
    }

    /// `basisPoints` as a person reads it: `20 %`, `12.5 %`, `0.01 %`.
    public static func percent(_ basisPoints: Int) -> String {
        let whole = basisPoints / 100, fraction = basisPoints % 100
        guard fraction != 0 else { return "\(whole) %" }
        let digits = fraction % 10 == 0 ? "\(fraction / 10)" : (fraction < 10 ? "0\(fraction)" : "\(fraction)")
        return "\(whole).\(digits) %"
    }

    /// The basis points a `--step` percentage names: `20` is 2000, `12.5` is 1250, `0.01` is 1.
    /// - Throws: `invalidArgument` (`--step`) for anything but a number over 0 and at most
    ///   100 with at most two decimals.
    public static func stepBasisPoints(percent text: String) throws -> Int {
        let problem = DiscfgError.invalid(
            "--step",
            "--step \"\(String(text.prefix(40)).debugEscaped)\" is not a percentage over 0 and at most 100 with at most two decimals, such as 20 or 12.5"
        )
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let isDigits = { (part: Substring) in part.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 3, isDigits(whole), let wholeValue = Int(whole) else { throw problem }
        var fractionValue = 0
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 2, isDigits(fraction), let value = Int(fraction) else { throw problem }
            fractionValue = fraction.count == 1 ? value * 10 : value
        }
        let basisPoints = wholeValue * 100 + fractionValue
        guard (1...fullShare).contains(basisPoints) else { throw problem }
        return basisPoints
    }
}
