import DiscfgConformance
import DiscfgCore
import Testing

@Suite("Deployment transitions: pause, resume, rollback, complete and revert as a pure state machine")
struct DeploymentTransitionTests {
    let start: Int64 = 1_767_225_600_000
    let second: Int64 = 1_000

    /// Linear 20 % every 30 s, bake 60 s, rolling back over `rollback` seconds.
    func linear(rollback: Int64 = 0) throws -> Deployment {
        try makeDeployment(try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: 30, bakeSeconds: 60, rollbackSeconds: rollback), start: start)
    }

    @Test("a pause freezes the share and shifts the rest of the schedule by the time paused")
    func pauseShiftsSchedule() throws {
        let paused = try linear().pause(at: start + 45 * second, by: "local:ana@laptop", reason: "watching")
        for t in [45, 46, 100, 10_000] as [Int64] {
            let status = paused.status(at: start + t * second)
            #expect(status.state == .paused)
            #expect(status.pausedIn == .deploying)
            #expect(status.shareBasisPoints == 4_000)
            #expect(status.nextStepAt == nil)
        }
        #expect(paused.status(at: start + 45 * second - 1).state == .deploying, "the pause counts only from its instant")
        // Resumed after 55 s: step 2 had 15 s left, so step 3 comes at 115 s.
        let resumed = try paused.resume(at: start + 100 * second, by: "local:ana@laptop", reason: "looks fine")
        #expect(resumed.status(at: start + 100 * second).state == .deploying)
        #expect(resumed.status(at: start + 100 * second).nextStepAt == start + 115 * second)
        #expect(resumed.status(at: start + 115 * second - 1).shareBasisPoints == 4_000)
        #expect(resumed.status(at: start + 115 * second).shareBasisPoints == 6_000)
        #expect(resumed.status(at: start + 205 * second - 1).state == .deploying)
        #expect(resumed.status(at: start + 205 * second).state == .baking)
        #expect(resumed.status(at: start + 265 * second - 1).state == .baking)
        #expect(resumed.status(at: start + 265 * second).state == .complete)
        // Two pauses add up.
        let twice = try resumed.pause(at: start + 120 * second, by: "a", reason: "").resume(at: start + 130 * second, by: "a", reason: "")
        #expect(twice.status(at: start + 215 * second - 1).state == .deploying)
        #expect(twice.status(at: start + 215 * second).state == .baking)
    }

    @Test("completesAt follows the pauses: the schedule's end shifted by each pause, nil while paused or rolling back")
    func completesAtFollowsPauses() throws {
        // Five steps of 30 s and a bake of 60 s: complete at 210 s.
        let deployment = try linear(rollback: 40)
        #expect(deployment.completesAt(after: start) == start + 210 * second)
        #expect(deployment.scheduleLeft(at: start + 10 * second) == 200 * second)
        let paused = try deployment.pause(at: start + 45 * second, by: "a", reason: "")
        #expect(paused.completesAt(after: start + 44 * second) == start + 210 * second, "the pause counts only from its instant")
        #expect(paused.completesAt(after: start + 60 * second) == nil, "while paused it waits for a resume")
        #expect(paused.scheduleLeft(at: start + 60 * second) == 165 * second)
        #expect(paused.scheduleLeft(at: start + 600 * second) == 165 * second, "the time left is frozen while paused")
        // Resumed after 55 s: complete 55 s later than planned, as status says.
        let resumed = try paused.resume(at: start + 100 * second, by: "a", reason: "")
        let end = try #require(resumed.completesAt(after: start + 100 * second))
        #expect(end == start + 265 * second)
        #expect(resumed.status(at: end - 1).state == .baking && resumed.status(at: end).state == .complete)
        #expect(resumed.completesAt(after: start + 400 * second) == end, "once complete, the instant it became so")
        #expect(resumed.scheduleLeft(at: start + 400 * second) == 0)
        // Two pauses add up.
        let twice = try resumed.pause(at: start + 120 * second, by: "a", reason: "").resume(at: start + 130 * second, by: "a", reason: "")
        #expect(twice.completesAt(after: start + 130 * second) == start + 275 * second)
        let rollingBack = try resumed.rollback(at: start + 150 * second, by: "a", reason: "")
        #expect(rollingBack.completesAt(after: start + 140 * second) == end, "before the rollback it still would complete")
        #expect(rollingBack.completesAt(after: start + 150 * second) == nil)
        #expect(rollingBack.scheduleLeft(at: start + 150 * second) == nil)
        #expect(try linear().rollback(at: start + 10 * second, by: "a", reason: "").completesAt(after: start + 500 * second) == nil)
        #expect(try linear().completesAt(after: .max) == start + 210 * second)
    }

    @Test("a pause during the bake freezes the bake left")
    func pauseDuringBake() throws {
        let paused = try linear().pause(at: start + 170 * second, by: "a", reason: "")
        #expect(paused.status(at: start + 500 * second).pausedIn == .baking)
        #expect(paused.status(at: start + 500 * second).bakeLeftMilliseconds == 40 * second)
        #expect(paused.status(at: start + 500 * second).shareBasisPoints == 10_000)
        let resumed = try paused.resume(at: start + 600 * second, by: "a", reason: "")
        #expect(resumed.status(at: start + 640 * second - 1).state == .baking)
        #expect(resumed.status(at: start + 640 * second).state == .complete)
    }

    @Test("a rollback over 0 seconds takes the candidate from everyone at once and is ROLLED_BACK")
    func rollbackAtOnce() throws {
        let deployment = try linear().rollback(at: start + 75 * second, by: "system:monitor", signal: .alarm("checkout-5xx"), reading: "ALARM")
        #expect(deployment.transitions.last?.reason == "signal alarm:checkout-5xx: ALARM")
        #expect(deployment.status(at: start + 75 * second - 1).shareBasisPoints == 6_000)
        #expect(deployment.status(at: start + 75 * second) == DeploymentStatus(state: .rolledBack, shareBasisPoints: 0, step: 0, stepCount: 5))
        #expect(deployment.status(at: start + 10_000 * second).shareBasisPoints == 0, "the share never rises again")
        let recorded = try deployment.finishRollback(at: start + 76 * second, by: "system:monitor", reason: "")
        #expect(recorded.status(at: start + 77 * second).state == .rolledBack)
        try expectError(.invalidArgument, field: "state", mentioning: ["is already ROLLED_BACK"]) {
            try recorded.finishRollback(at: start + 78 * second, by: "system:monitor", reason: "")
        }
    }

    @Test("a gradual rollback walks back down the steps it went up, then is ROLLED_BACK")
    func gradualRollback() throws {
        // At 75 s step 3 (60 %); over 60 s that is three steps down, one each 20 s.
        let deployment = try linear(rollback: 60).rollback(at: start + 75 * second, by: "local:ana@laptop", reason: "errors")
        let expected: [(Int64, DeploymentState, Int, Int64?)] = [
            (75_000, .rollingBack, 6_000, 95_000), (94_999, .rollingBack, 6_000, 95_000), (95_000, .rollingBack, 4_000, 115_000),
            (115_000, .rollingBack, 2_000, 135_000), (134_999, .rollingBack, 2_000, 135_000), (135_000, .rolledBack, 0, nil),
        ]
        for (t, state, share, next) in expected {
            let status = deployment.status(at: start + t)
            #expect(status.state == state, "at \(t)")
            #expect(status.shareBasisPoints == share, "at \(t)")
            #expect(status.nextStepAt == next.map { start + $0 }, "at \(t)")
        }
        try expectError(.invalidArgument, field: "state", mentioning: ["is ROLLING_BACK"]) {
            try deployment.finishRollback(at: start + 134 * second, by: "system:monitor", reason: "")
        }
        #expect(try deployment.finishRollback(at: start + 135 * second, by: "system:monitor", reason: "").transitions.count == 2)
    }

    @Test("a rollback from a pause or the bake starts from the share held then")
    func rollbackFromPauseAndBake() throws {
        let fromPause = try linear(rollback: 40).pause(at: start + 45 * second, by: "a", reason: "").rollback(at: start + 300 * second, by: "a", reason: "")
        #expect(fromPause.status(at: start + 300 * second).shareBasisPoints == 4_000)
        #expect(fromPause.status(at: start + 320 * second).shareBasisPoints == 2_000)
        #expect(fromPause.status(at: start + 340 * second).state == .rolledBack)
        let fromBake = try linear(rollback: 50).rollback(at: start + 160 * second, by: "a", reason: "")
        #expect(fromBake.status(at: start + 160 * second).shareBasisPoints == 10_000)
        #expect(fromBake.status(at: start + 170 * second).shareBasisPoints == 8_000)
        #expect(fromBake.status(at: start + 210 * second).state == .rolledBack)
    }

    @Test("complete is recorded once the clock says so; revert follows it and takes the candidate back")
    func completeAndRevert() throws {
        let deployment = try linear()
        try expectError(.invalidArgument, field: "state", mentioning: ["deployment 0123456789abcdef is BAKING", "recorded COMPLETE"]) {
            try deployment.complete(at: start + 200 * second, by: "system:monitor", reason: "")
        }
        try expectError(.invalidArgument, field: "state", mentioning: ["is DEPLOYING; only a COMPLETE deployment can be reverted"]) {
            try deployment.revert(at: start + 10 * second, by: "a", reason: "")
        }
        let complete = try deployment.complete(at: start + 210 * second, by: "system:monitor", reason: "schedule and bake ended")
        try expectError(.invalidArgument, field: "state", mentioning: ["is already COMPLETE"]) {
            try complete.complete(at: start + 211 * second, by: "system:monitor", reason: "")
        }
        try expectError(.invalidArgument, field: "state", mentioning: ["is already COMPLETE", "revert a COMPLETE one"]) {
            try complete.rollback(at: start + 211 * second, by: "a", reason: "")
        }
        let reverted = try complete.revert(at: start + 300 * second, by: "local:ana@laptop", reason: "the pool was too big")
        #expect(reverted.status(at: start + 299 * second).state == .complete)
        #expect(reverted.status(at: start + 300 * second) == DeploymentStatus(state: .reverted, shareBasisPoints: 0, step: 0, stepCount: 5))
        #expect(reverted.version(for: "anyone", at: start + 300 * second) == 41)
        let later = start + 301 * second
        let attempts: [() throws -> Deployment] = [
            { try reverted.pause(at: later, by: "a", reason: "") }, { try reverted.resume(at: later, by: "a", reason: "") },
            { try reverted.rollback(at: later, by: "a", reason: "") }, { try reverted.revert(at: later, by: "a", reason: "") },
        ]
        for attempt in attempts {
            try expectError(.invalidArgument, field: "state", mentioning: ["is REVERTED"]) { try attempt() }
        }
    }

    @Test("refusals name the deployment and its state; times before the start or the last transition are refused")
    func refusals() throws {
        let rolledBack = try linear().rollback(at: start + 10 * second, by: "a", reason: "")
        try expectError(.invalidArgument, field: "state", mentioning: ["deployment 0123456789abcdef is ROLLED_BACK; only a DEPLOYING or BAKING deployment can be paused"]) {
            try rolledBack.pause(at: start + 20 * second, by: "a", reason: "")
        }
        try expectError(.invalidArgument, field: "state", mentioning: ["is DEPLOYING; only a PAUSED deployment can be resumed"]) {
            try linear().resume(at: start + 20 * second, by: "a", reason: "")
        }
        let paused = try linear().pause(at: start + 20 * second, by: "a", reason: "")
        try expectError(.invalidArgument, field: "state", mentioning: ["is PAUSED"]) { try paused.pause(at: start + 21 * second, by: "a", reason: "") }
        try expectError(.invalidArgument, field: "at", mentioning: ["before"]) { try paused.resume(at: start + 19 * second, by: "a", reason: "") }
        try expectError(.invalidArgument, field: "at", mentioning: ["started at"]) { try linear().pause(at: start - 1, by: "a", reason: "") }
        try expectError(.invalidArgument, field: "by") { try linear().pause(at: start, by: "", reason: "") }
        try expectError(.invalidArgument, field: "reason") { try linear().pause(at: start, by: "a", reason: String(repeating: "x", count: 1025)) }
        try expectError(.invalidArgument, field: "at") { try linear().pause(at: Deployment.maxMilliseconds + 1, by: "a", reason: "") }
        #expect(paused.transitions.count == 1, "a refusal changes nothing")
    }

    @Test("status at extreme instants does not trap")
    func extremeInstants() throws {
        let deployment = try linear(rollback: 60).pause(at: start + 10 * second, by: "a", reason: "")
        #expect(deployment.status(at: .min).shareBasisPoints == 0)
        #expect(deployment.status(at: .max).state == .paused)
        #expect(try linear().status(at: .max).state == .complete)
    }
}
