import DiscfgConformance
import DiscfgCore
import Testing

/// A deployment of `strategy` started at `start`, with a fixed id.
func makeDeployment(
    _ strategy: DeploymentStrategy, id: String = "0123456789abcdef", start: Int64 = 1_767_225_600_000, signals: [DeploymentSignal] = []
) throws -> Deployment {
    try Deployment(
        id: id, prefix: .root, stableRevision: 41, candidate: DeploymentCandidate(revision: 42), strategy: strategy,
        startedAt: start, message: "raise the pool size", startedBy: "token:ci", signals: signals
    )
}

@Suite("Deployment schedule: the share, step and state a strategy gives at each instant")
struct DeploymentScheduleTests {
    let start: Int64 = 1_767_225_600_000

    @Test("every predefined strategy at the edges of each step, of the bake and of completion", arguments: DeploymentStrategy.predefined)
    func predefinedEdges(strategy: DeploymentStrategy) throws {
        let deployment = try makeDeployment(strategy, start: start)
        let interval = strategy.intervalSeconds * 1000, bake = strategy.bakeSeconds * 1000
        let count = strategy.stepCount
        for k in 1...count where interval > 0 {
            let end = start + Int64(k) * interval
            let last = deployment.status(at: end - 1)
            #expect(last.state == .deploying)
            #expect(last.shareBasisPoints == strategy.shares[k - 1])
            #expect(last.step == k)
            #expect(last.nextStepAt == end)
            let next = deployment.status(at: end)
            if k < count {
                #expect(next.state == .deploying)
                #expect(next.shareBasisPoints == strategy.shares[k])
                #expect(next.step == k + 1)
            } else {
                #expect(next.state == .baking)
                #expect(next.shareBasisPoints == 10_000)
                #expect(next.bakeLeftMilliseconds == bake)
            }
        }
        let bakeEnd = start + Int64(count) * interval + bake
        let baking = deployment.status(at: bakeEnd - 1)
        #expect(baking.state == .baking)
        #expect(baking.bakeLeftMilliseconds == 1)
        #expect(baking.nextStepAt == nil)
        let complete = deployment.status(at: bakeEnd)
        #expect(complete == DeploymentStatus(state: .complete, shareBasisPoints: 10_000, step: count, stepCount: count))
        #expect(deployment.status(at: bakeEnd + 86_400_000 * 365).state == .complete)
        #expect(deployment.status(at: start - 1).shareBasisPoints == 0, "nothing is exposed before the start")
        #expect(deployment.status(at: start - 1).nextStepAt == start)
    }

    @Test("the predefined strategies' shares, intervals and bakes are AppConfig's")
    func predefinedTable() throws {
        let table = Dictionary(uniqueKeysWithValues: DeploymentStrategy.predefined.map { ($0.name ?? "", $0) })
        #expect(table["AllAtOnce"]?.shares == [10_000])
        #expect(table["AllAtOnce"]?.intervalSeconds == 0)
        #expect(table["AllAtOnce"]?.bakeSeconds == 600)
        #expect(table["Linear50PercentEvery30Seconds"]?.shares == [5_000, 10_000])
        #expect(table["Linear50PercentEvery30Seconds"]?.bakeSeconds == 60)
        #expect(table["Linear20PercentEvery6Minutes"]?.shares == [2_000, 4_000, 6_000, 8_000, 10_000])
        #expect(table["Linear20PercentEvery6Minutes"]?.bakeSeconds == 1_800)
        #expect(table["Canary10Percent20Minutes"]?.shares == [1_000, 2_000, 4_000, 8_000, 10_000])
        let canary = try #require(table["Canary10Percent20Minutes"])
        #expect(canary.deployingMilliseconds == 1_200_000, "10, 20, 40, 80, 100 % over 20 minutes")
        #expect(table["Canary10Percent20Minutes"]?.bakeSeconds == 600)
        let all = try makeDeployment(try .predefined(named: "AllAtOnce"), start: start)
        #expect(all.status(at: start).state == .baking, "all at once bakes from the first instant")
        #expect(all.status(at: start).shareBasisPoints == 10_000)
    }

    @Test("linear 20 % every 6 minutes: 20 % at once, 100 % from minute 24, deploying for 30 minutes")
    func linearTwentyPercent() throws {
        let deployment = try makeDeployment(try .predefined(named: "Linear20PercentEvery6Minutes"), start: start)
        let minute: Int64 = 60_000
        #expect(deployment.status(at: start).shareBasisPoints == 2_000)
        #expect(deployment.status(at: start + 24 * minute - 1).shareBasisPoints == 8_000)
        #expect(deployment.status(at: start + 24 * minute).shareBasisPoints == 10_000)
        #expect(deployment.status(at: start + 30 * minute - 1).state == .deploying)
        #expect(deployment.status(at: start + 30 * minute).state == .baking)
    }

    @Test("linear steps are min(100 %, k·step) and exponential ones min(100 %, step·2^(k−1)), capped at 100 %")
    func sharesCap() throws {
        #expect(try DeploymentStrategy(growth: .linear, stepBasisPoints: 3_000, intervalSeconds: 60, bakeSeconds: 0).shares == [3_000, 6_000, 9_000, 10_000])
        #expect(try DeploymentStrategy(growth: .exponential, stepBasisPoints: 3_000, intervalSeconds: 60, bakeSeconds: 0).shares == [3_000, 6_000, 10_000])
        #expect(try DeploymentStrategy(growth: .exponential, stepBasisPoints: 1, intervalSeconds: 60, bakeSeconds: 0).shares.count == 15)
        #expect(try DeploymentStrategy(growth: .linear, stepBasisPoints: 1, intervalSeconds: 1, bakeSeconds: 0).shares.count == 10_000)
        #expect(try DeploymentStrategy(growth: .linear, stepBasisPoints: 1_250, intervalSeconds: 60, bakeSeconds: 0).shares.last == 10_000)
        let zeroBake = try makeDeployment(try DeploymentStrategy(growth: .linear, stepBasisPoints: 3_000, intervalSeconds: 60, bakeSeconds: 0), start: start)
        #expect(zeroBake.status(at: start + 4 * 60_000 - 1).shareBasisPoints == 10_000)
        #expect(zeroBake.status(at: start + 4 * 60_000).state == .complete, "no bake: complete when the steps end")
    }

    @Test("strategies out of bounds are refused naming the flag")
    func strategyBounds() throws {
        try expectError(.invalidArgument, field: "--step") { try DeploymentStrategy(growth: .linear, stepBasisPoints: 0, intervalSeconds: 60, bakeSeconds: 0) }
        try expectError(.invalidArgument, field: "--step") { try DeploymentStrategy(growth: .linear, stepBasisPoints: 10_001, intervalSeconds: 60, bakeSeconds: 0) }
        try expectError(.invalidArgument, field: "--interval") { try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: 30 * 86_400 + 1, bakeSeconds: 0) }
        try expectError(.invalidArgument, field: "--interval", mentioning: ["everyone at once"]) {
            try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: 0, bakeSeconds: 0)
        }
        try expectError(.invalidArgument, field: "--bake") { try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: 60, bakeSeconds: 7 * 86_400 + 1) }
        try expectError(.invalidArgument, field: "--bake") { try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: 60, bakeSeconds: -1) }
        try expectError(.invalidArgument, field: "--rollback-over") {
            try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: 60, bakeSeconds: 0, rollbackSeconds: 7 * 86_400 + 1)
        }
        #expect(try DeploymentStrategy(growth: .linear, stepBasisPoints: 10_000, intervalSeconds: 0, bakeSeconds: 0).stepCount == 1)
    }

    @Test("predefined names with or without AppConfig., in any case; others refused naming the strategies")
    func predefinedNames() throws {
        for name in ["Linear20PercentEvery6Minutes", "AppConfig.Linear20PercentEvery6Minutes", "appconfig.linear20percentevery6minutes", "LINEAR20PERCENTEVERY6MINUTES"] {
            #expect(try DeploymentStrategy.predefined(named: name).name == "Linear20PercentEvery6Minutes")
        }
        #expect(try DeploymentStrategy.predefined(named: "appconfig.allatonce").name == "AllAtOnce")
        for name in ["Linear", "", "AppConfig.", "AllAtOnce2"] {
            try expectError(.invalidArgument, field: "--strategy", mentioning: ["Canary10Percent20Minutes", "linear or exponential"]) {
                try DeploymentStrategy.predefined(named: name)
            }
        }
    }

    @Test("--step as a percentage: whole or with up to two decimals, over 0 and at most 100")
    func stepPercentages() throws {
        #expect(try DeploymentStrategy.stepBasisPoints(percent: "20") == 2_000)
        #expect(try DeploymentStrategy.stepBasisPoints(percent: "12.5") == 1_250)
        #expect(try DeploymentStrategy.stepBasisPoints(percent: "0.01") == 1)
        #expect(try DeploymentStrategy.stepBasisPoints(percent: "100") == 10_000)
        #expect(try DeploymentStrategy.stepBasisPoints(percent: "33.33") == 3_333)
        for text in ["0", "0.00", "100.01", "101", "12.345", "-5", "", "abc", "1e2", ".5", "5.", "+5", " 5", "99999999999999999999"] {
            try expectError(.invalidArgument, field: "--step", mentioning: ["percentage"]) { try DeploymentStrategy.stepBasisPoints(percent: text) }
        }
        #expect(DeploymentStrategy.percent(1_250) == "12.5 %")
        #expect(DeploymentStrategy.percent(1) == "0.01 %")
        #expect(DeploymentStrategy.percent(2_000) == "20 %")
    }

    @Test("durations: units in order, a bare number is seconds; one sentence for anything else")
    func durations() throws {
        let bound = DeploymentStrategy.maxIntervalSeconds
        let good: [(String, Int64)] = [("0", 0), ("30", 30), ("30s", 30), ("6m", 360), ("1h30m", 5_400), ("2d", 172_800), ("1d12h", 129_600), ("30d", bound), ("0s", 0)]
        for (text, seconds) in good {
            #expect(try DeploymentDuration.seconds(text, field: "--interval", upTo: bound) == seconds, "\(text)")
        }
        let bad: [(String, String)] = [
            ("-1", "negative"), ("", "empty"), ("5x", "unknown unit \"x\""), ("1e400", "unknown unit \"e\""),
            ("9223372036854775808", "longer than 30d"), ("18446744073709551616", "longer than 30d"), ("9223372036854775807s", "longer than 30d"),
            ("106751991167301d", "longer than 30d"), ("31d", "longer than 30d"), ("2592001", "longer than 30d"),
            ("1m1h", "out of order"), ("1m1m", "out of order"), ("m", "unit without a number"), ("1h30", "without a unit"), ("1.5h", "\".\""), (" 5", "\" \""),
        ]
        for (text, phrase) in bad {
            try expectError(.invalidArgument, field: "--interval", mentioning: [phrase]) { try DeploymentDuration.seconds(text, field: "--interval", upTo: bound) }
        }
        try expectError(.invalidArgument, field: "--bake", mentioning: ["longer than 7d"]) { try DeploymentDuration.seconds("8d", field: "--bake", upTo: DeploymentStrategy.maxBakeSeconds) }
        #expect(DeploymentDuration.spelled(5_400) == "1h30m")
        #expect(DeploymentDuration.spelled(0) == "0s")
        #expect(DeploymentDuration.spelled(129_661) == "1d12h1m1s")
    }
}
