import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

/// SplitMix64: a tiny seeded generator, so each simulated run is the same every time.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

@Suite("Deployment health test: Wald's sequential test on errors per version decides rollback")
struct DeploymentHealthTests {
    typealias Cohort = HealthTest.Cohort

    /// One deployment's reports: each look adds 800 stable and 200 candidate reads with
    /// errors at the given rates, until the test decides (or 400 looks pass).
    func simulate(seed: UInt64, stableRate: Double, candidateRate: Double) -> HealthTest.Decision {
        var random = SplitMix64(state: seed)
        var stable = Cohort(reads: 0, errors: 0), candidate = Cohort(reads: 0, errors: 0)
        for _ in 0..<400 {
            for _ in 0..<800 where Double.random(in: 0..<1, using: &random) < stableRate { stable.errors += 1 }
            for _ in 0..<200 where Double.random(in: 0..<1, using: &random) < candidateRate { candidate.errors += 1 }
            stable.reads += 800
            candidate.reads += 200
            let decision = HealthTest.standard.decide(stable: stable, candidate: candidate)
            if decision != .undecided { return decision }
        }
        return .undecided
    }

    @Test("equal error rates: healthy in nearly every run, false rollbacks well within α = 5 % plus a margin over 200 runs")
    func equalRatesAreHealthy() {
        let decisions = (0..<200).map { simulate(seed: UInt64($0), stableRate: 0.02, candidateRate: 0.02) }
        let rollbacks = decisions.filter { $0 == .rollback }.count
        let healthy = decisions.filter { $0 == .healthy }.count
        #expect(rollbacks <= 16, "\(rollbacks) false rollbacks in 200 runs")
        #expect(healthy >= 180, "\(healthy) healthy in 200 runs")
    }

    @Test("a candidate three times worse is rolled back in nearly every run")
    func threeTimesWorseRollsBack() {
        let decisions = (0..<200).map { simulate(seed: 1_000 + UInt64($0), stableRate: 0.02, candidateRate: 0.06) }
        let rollbacks = decisions.filter { $0 == .rollback }.count
        #expect(rollbacks >= 190, "\(rollbacks) rollbacks in 200 runs")
    }

    @Test("the log-likelihood ratio is Wald's, with the bounds ln((1−β)/α) and ln(β/(1−α))")
    func ratioAndBounds() throws {
        let test = HealthTest.standard
        #expect(abs(test.rollbackBound - log(19)) < 1e-12)
        #expect(abs(test.healthyBound + log(19)) < 1e-12)
        let stable = Cohort(reads: 8_000, errors: 12), candidate = Cohort(reads: 2_000, errors: 9)
        let pi0 = 2_000.0 / 10_000, pi1 = 2 * 2_000.0 / (2 * 2_000 + 8_000)
        let direct = 9 * log(pi1 / pi0) + 12 * log((1 - pi1) / (1 - pi0))
        let llr = try #require(test.logLikelihoodRatio(stable: stable, candidate: candidate))
        #expect(abs(llr - direct) < 1e-9)
        #expect(test.decide(stable: Cohort(reads: 10_000, errors: 20), candidate: Cohort(reads: 2_000, errors: 30)) == .rollback)
        #expect(test.decide(stable: Cohort(reads: 8_000, errors: 80), candidate: Cohort(reads: 2_000, errors: 10)) == .healthy)
        #expect(test.decide(stable: Cohort(reads: 8_000, errors: 1), candidate: Cohort(reads: 2_000, errors: 1)) == .undecided)
        let strict = try HealthTest(ratio: 3, falseRollback: 0.01, missedRegression: 0.2)
        #expect(abs(strict.rollbackBound - log(0.8 / 0.01)) < 1e-12)
    }

    @Test("no decision while either cohort has no reads; extreme counts do not trap")
    func extremes() {
        let test = HealthTest.standard
        let max = UInt64.max
        #expect(test.decide(stable: Cohort(reads: 0, errors: 0), candidate: Cohort(reads: 100, errors: 100)) == .undecided)
        #expect(test.decide(stable: Cohort(reads: 100, errors: 100), candidate: Cohort(reads: 0, errors: 5)) == .undecided)
        #expect(test.decide(stable: Cohort(reads: 1, errors: 0), candidate: Cohort(reads: 1, errors: 0)) == .undecided)
        #expect(test.decide(stable: Cohort(reads: max, errors: 0), candidate: Cohort(reads: 1, errors: max)) == .rollback)
        #expect(test.decide(stable: Cohort(reads: max, errors: max), candidate: Cohort(reads: max, errors: max)) == .healthy)
        #expect(test.decide(stable: Cohort(reads: 1, errors: max), candidate: Cohort(reads: max, errors: 0)) == .healthy)
        for counts in [(max, max, max, max), (max, 0, max, 0), (1, max, 1, max), (max, max, 1, 0)] {
            let llr = test.logLikelihoodRatio(stable: Cohort(reads: counts.0, errors: counts.1), candidate: Cohort(reads: counts.2, errors: counts.3))
            #expect(llr.map { !$0.isNaN } == true)
        }
    }

    @Test("a ratio of 1 or less, or error chances out of (0, 1), are refused")
    func badParameters() throws {
        for (ratio, alpha, beta) in [(1.0, 0.05, 0.05), (0.5, 0.05, 0.05), (.infinity, 0.05, 0.05), (.nan, 0.05, 0.05), (2, 0, 0.05), (2, 0.05, 0), (2, 0.6, 0.5), (2, .nan, 0.05)] {
            try expectError(.invalidArgument) { try HealthTest(ratio: ratio, falseRollback: alpha, missedRegression: beta) }
        }
    }
}
