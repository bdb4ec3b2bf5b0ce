import Foundation

/// Whether a candidate's error rate is significantly worse than the stable version's,
/// decided from cumulative counts with Wald's sequential probability ratio test — not a
/// fixed threshold, so a handful of errors neither rolls back nor passes a deployment.
///
/// The test conditions on the errors seen: of e = e_s + e_c errors, how many fell on the
/// candidate. With n_s and n_c reads per cohort, if both versions fail at the same rate
/// (H0) each error is on the candidate with probability π0 = n_c/(n_c+n_s); if the
/// candidate fails ``ratio`` (R) times as often (H1), with π1 = R·n_c/(R·n_c+n_s). The
/// log-likelihood ratio of H1 to H0 is
///
///     LLR = e_c·ln(π1/π0) + e_s·ln((1−π1)/(1−π0)) = e_c·ln R − e·ln(1 + (R−1)·π0)
///
/// (the second form, which this computes, loses no precision when one cohort is tiny).
/// The answer is ``Decision/rollback`` when LLR ≥ ln((1−β)/α), ``Decision/healthy`` when
/// LLR ≤ ln(β/(1−α)), and ``Decision/undecided`` between, or while either cohort has no
/// reads. Counts are whole numbers up to `UInt64.max`; they are used as `Double`.
///
/// What α and β mean for a user:
/// - ``falseRollback`` (α, default 5 %): the chance that a candidate as good as the stable
///   version is rolled back anyway — the price of listening.
/// - ``missedRegression`` (β, default 5 %): the chance that a candidate ``ratio`` times as
///   bad is let through instead of rolled back.
/// Smaller values need more errors before deciding. Errors the application never reports
/// are not seen; a candidate that fails in ways nobody counts passes.
///
/// ```swift
/// let test = HealthTest.standard
/// test.decide(stable: .init(reads: 10_000, errors: 20), candidate: .init(reads: 2_000, errors: 30))  // .rollback
/// ```
public struct HealthTest: Hashable, Sendable {
    /// What the counts say.
    public enum Decision: String, Hashable, Sendable {
        /// The candidate is significantly worse: roll back.
        case rollback
        /// The candidate is no worse, as far as the test can tell.
        case healthy
        /// Not enough evidence either way yet.
        case undecided
    }

    /// Reads and errors reported for one version.
    public struct Cohort: Hashable, Sendable {
        /// Reads of the version (requests served with it).
        public var reads: UInt64
        /// Errors applications reported against it.
        public var errors: UInt64

        /// A cohort's counts.
        public init(reads: UInt64, errors: UInt64) {
            self.reads = reads
            self.errors = errors
        }
    }

    /// R: how many times worse the candidate must be for the test to act (over 1).
    public let ratio: Double
    /// α: the chance of rolling back a candidate as good as the stable version.
    public let falseRollback: Double
    /// β: the chance of letting through a candidate ``ratio`` times worse.
    public let missedRegression: Double

    /// R = 2, α = β = 5 %.
    public static let standard = HealthTest(checked: 2, 0.05, 0.05)

    /// A test with the given ratio and error chances.
    /// - Throws: `invalidArgument` unless ratio > 1 (and finite), α and β are in (0, 1)
    ///   and α + β < 1.
    public init(ratio: Double, falseRollback: Double, missedRegression: Double) throws {
        guard ratio.isFinite, ratio > 1 else {
            throw DiscfgError.invalid("ratio", "the health test's ratio must be a number over 1 (how many times worse is a regression), got \(ratio)")
        }
        guard falseRollback > 0, missedRegression > 0, falseRollback + missedRegression < 1 else {
            throw DiscfgError.invalid("falseRollback", "the health test's error chances must each be over 0 and together under 1, got α \(falseRollback) and β \(missedRegression)")
        }
        self.init(checked: ratio, falseRollback, missedRegression)
    }

    private init(checked ratio: Double, _ alpha: Double, _ beta: Double) {
        self.ratio = ratio
        self.falseRollback = alpha
        self.missedRegression = beta
    }

    /// LLR at or above this rolls back: ln((1−β)/α).
    public var rollbackBound: Double { log((1 - missedRegression) / falseRollback) }
    /// LLR at or below this is healthy: ln(β/(1−α)).
    public var healthyBound: Double { log(missedRegression / (1 - falseRollback)) }

    /// The log-likelihood ratio of "the candidate is ``ratio`` times worse" to "equal
    /// rates" given the counts; nil while either cohort has no reads.
    public func logLikelihoodRatio(stable: Cohort, candidate: Cohort) -> Double? {
        guard stable.reads > 0, candidate.reads > 0 else { return nil }
        let readsC = Double(candidate.reads), readsS = Double(stable.reads)
        let errorsC = Double(candidate.errors)
        let errors = errorsC + Double(stable.errors)
        // π0 from the share of reads; as Doubles the sums cannot overflow.
        let pi0 = readsC / (readsC + readsS)
        return errorsC * log(ratio) - errors * log1p((ratio - 1) * pi0)
    }

    /// What the counts say now. Counts are cumulative since the deployment began; act on
    /// the first ``Decision/rollback``.
    public func decide(stable: Cohort, candidate: Cohort) -> Decision {
        guard let llr = logLikelihoodRatio(stable: stable, candidate: candidate) else { return .undecided }
        if llr >= rollbackBound { return .rollback }
        if llr <= healthyBound { return .healthy }
        return .undecided
    }
}
