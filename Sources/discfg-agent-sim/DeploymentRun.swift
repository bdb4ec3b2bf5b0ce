import DiscfgAgent
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSignals
import DiscfgTestSupport
import Foundation

/// `--deploy`: the agents follow one staged deployment (linear 20 % every `step` seconds)
/// of `/app/k0`, each reading as its own instance (`agent-N`) through the overlay every face
/// uses, from the copy its follower keeps. At the middle of each step the share of agents on
/// the candidate is compared with the schedule, and every agent is checked never to go back.
/// After `steps` steps a CloudWatch alarm on moto is set to ALARM; a monitor passing every
/// `monitorPeriod` seconds rolls the deployment back, and the time until every agent reads
/// the stable version again is measured against one refresh interval plus one monitor period.
struct DeploymentRun {
    var step = 30.0
    var steps = 4
    var monitorPeriod = 5.0

    func run(
        moto: MotoServer, writer: DynamoDBStore, config: ConfigName, followers: [(ConfigFollower, ReplicaStore)], interval: Double
    ) async throws {
        let alarm = MotoCloudWatch.uniqueName("sim-5xx")
        try await MotoCloudWatch.createAlarm(alarm, on: moto)
        try await MotoCloudWatch.setState(alarm, "OK", reason: "fine", on: moto)
        let strategy = try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: Int64(step), bakeSeconds: 600)
        let plan = DeploymentPlan(
            prefix: try KeyPrefix("/app/"), entries: [.init(key: try Key("/app/k0"), value: Data("candidate".utf8))], replace: false,
            strategy: strategy, signals: [.alarm(alarm)], message: "simulation"
        )
        let deployment = try await writer.changeDeployment(.start(plan), in: config).deployment
        let clock = ContinuousClock()
        let began = clock.now
        print("deployment \(deployment.id): linear 20 % every \(Int(step)) s, \(followers.count) agents refreshing every \(Int(interval)) s")
        let reader = SignalReader(alarms: .client(MotoCloudWatch.alarms(moto)))
        let monitor = DeploymentMonitor(store: writer, signals: reader)
        let monitoring = Task {
            while !Task.isCancelled {
                for action in await monitor.pass() { print("  monitor: \(action)") }
                try? await Task.sleep(for: .seconds(monitorPeriod))
            }
        }
        var seen = [Bool](repeating: false, count: followers.count)
        var wentBack = 0
        func reading(_ index: Int) async throws -> Bool {
            let replica = followers[index].1
            let overlay = try await replica.deploymentOverlay(in: config)
            let live = try await replica.get(Key("/app/k0"), in: config)
            let item = overlay.item(at: try Key("/app/k0"), live: live, entity: "agent-\(index)", at: SystemClock().now().milliseconds)
            return item?.value == Data("candidate".utf8)
        }
        // Each agent's copy follows on its own: refresh them all through the run.
        let refreshing = Task {
            await withTaskGroup(of: Void.self) { group in
                for (follower, _) in followers {
                    group.addTask {
                        var tick = clock.now + .seconds(Double.random(in: 0..<interval))
                        while !Task.isCancelled {
                            try? await Task.sleep(until: tick, clock: clock)
                            tick = tick + .seconds(interval)
                            _ = await follower.refresh()
                        }
                    }
                }
            }
        }
        for stepIndex in 1...steps {
            // Sample in the second half of the step: every agent has refreshed since the record was written.
            try await Task.sleep(until: began + .seconds(step * (Double(stepIndex) - 0.25)), clock: clock)
            var onCandidate = 0
            for index in followers.indices {
                let sees = try await reading(index)
                if seen[index], !sees { wentBack += 1 }
                seen[index] = seen[index] || sees
                if sees { onCandidate += 1 }
            }
            let share = Double(onCandidate) / Double(followers.count) * 100
            let schedule = Double(deployment.status(at: SystemClock().now().milliseconds).shareBasisPoints) / 100
            print(String(format: "  step %d: %.1f %% of agents on the candidate, schedule %.0f %% (off by %.1f points)", stepIndex, share, schedule, share - schedule))
        }
        print("  agents that went back during the rollout: \(wentBack)")
        let alarmed = clock.now
        try await MotoCloudWatch.setState(alarm, "ALARM", reason: "5xx above 1 %", on: moto)
        var remaining = Set(followers.indices)
        while !remaining.isEmpty, clock.now - alarmed < .seconds(interval + monitorPeriod + 60) {
            for index in remaining where try await !reading(index) { remaining.remove(index) }
            if !remaining.isEmpty { try await Task.sleep(for: .milliseconds(200)) }
        }
        let took = (clock.now - alarmed).seconds
        print(String(format: "  alarm ALARM → every agent on the stable version in %.1f s (bound: refresh %.0f s + monitor %.0f s = %.0f s); %d agents still on the candidate",
                     took, interval, monitorPeriod, interval + monitorPeriod, remaining.count))
        monitoring.cancel()
        refreshing.cancel()
        await reader.shutdown()
    }
}
