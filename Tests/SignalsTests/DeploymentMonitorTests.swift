import DiscfgCore
import DiscfgSignals
import DiscfgTestSupport
import Foundation
import Testing

/// The deployment monitor over a store: it records COMPLETE and ROLLED_BACK when the
/// clock says so, rolls back when a signal reads unhealthy (a CloudWatch alarm on moto,
/// a health URL), leaves a healthy deployment alone, and two monitors never both apply one
/// transition.
@Suite("Deployment monitor: the clock's transitions, rollbacks on signals, one writer per transition")
struct DeploymentMonitorTests {
    static let start = Date(milliseconds: 1_767_225_600_000)
    static let c = try! ConfigName("c")

    /// A store with config `c` (`/app/a` = 1) and a deployment of `/app/a` = 10 watching `signals`.
    static func deployed(_ clock: ManualClock, signals: [DeploymentSignal]) async throws -> (MemoryStore, Deployment) {
        let store = MemoryStore(clock: clock)
        _ = try await store.createConfig(c, settings: ConfigSettings())
        _ = try await store.set(try Key("/app/a"), to: Data("1".utf8), in: c, options: SetOptions())
        let plan = DeploymentPlan(
            prefix: try KeyPrefix("/app/"), entries: [.init(key: try Key("/app/a"), value: Data("10".utf8))], replace: false,
            strategy: try DeploymentStrategy(growth: .linear, stepBasisPoints: 5_000, intervalSeconds: 60, bakeSeconds: 60), signals: signals
        )
        return (store, try await store.changeDeployment(.start(plan), in: c).deployment)
    }

    static func live(_ store: MemoryStore) async throws -> String? {
        try await store.get(try Key("/app/a"), in: c).map { String(decoding: $0.value, as: UTF8.self) }
    }

    @Test("an alarm that goes to ALARM on moto's CloudWatch rolls the deployment back, attributed to the monitor and naming the alarm; the next pass ends it")
    func alarmRollsBack() async throws {
        try await withServer(try await MotoServer.start()) { moto in
            let name = MotoCloudWatch.uniqueName("checkout-5xx")
            try await MotoCloudWatch.createAlarm(name, on: moto)
            try await MotoCloudWatch.setState(name, "OK", reason: "fine", on: moto)
            let clock = ManualClock(Self.start)
            let (store, deployment) = try await Self.deployed(clock, signals: [.alarm(name)])
            let reader = SignalReader(alarms: .client(MotoCloudWatch.alarms(moto)))
            let monitor = DeploymentMonitor(store: store, signals: reader, clock: clock)
            #expect(await monitor.pass().isEmpty, "OK: nothing to do")
            try await MotoCloudWatch.setState(name, "ALARM", reason: "5xx above 1 %", on: moto)
            let actions = await monitor.pass()
            #expect(actions.map(\.due.kind) == [.rollingBack] && actions.first?.revision != nil, "\(actions)")
            let record = try await store.deployment(deployment.id, in: Self.c).deployment
            let transition = try #require(record.transitions.last)
            #expect(transition.state == .rollingBack && transition.by == "system:monitor" && transition.reason.hasPrefix("signal alarm:\(name): "), "\(transition)")
            let ended = await monitor.pass()
            #expect(ended.map(\.due.kind) == [.rolledBack], "\(ended)")
            #expect(try await Self.live(store) == "1", "the live key never changed")
            #expect(try await store.deployments(in: Self.c).running.isEmpty)
            await reader.shutdown()
        }
    }

    @Test("a health URL answering 500 rolls back; one answering 200 lets the deployment run to COMPLETE, which the monitor records")
    func healthURL() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            let clock = ManualClock(Self.start)
            let reader = SignalReader(alarms: .unavailable("no CloudWatch in this test"))
            let (failing, _) = try await Self.deployed(clock, signals: [.http("\(peer.base)/status/500")])
            let rolled = await DeploymentMonitor(store: failing, signals: reader, clock: clock).pass()
            #expect(rolled.map(\.due.kind) == [.rollingBack] && rolled.first?.due.reason.contains("500") == true, "\(rolled)")

            let (healthy, _) = try await Self.deployed(clock, signals: [.http("\(peer.base)/status/200")])
            let monitor = DeploymentMonitor(store: healthy, signals: reader, clock: clock)
            #expect(await monitor.pass().isEmpty)
            clock.advance(seconds: 180)
            let done = await monitor.pass()
            #expect(done.map(\.due.kind) == [.complete], "\(done)")
            #expect(try await Self.live(healthy) == "10", "COMPLETE made the candidate live")
            await reader.shutdown()
        }
    }

    @Test("two monitors passing at once record one COMPLETE between them")
    func twoMonitors() async throws {
        let clock = ManualClock(Self.start)
        let (store, deployment) = try await Self.deployed(clock, signals: [])
        clock.advance(seconds: 180)
        let monitors = (0..<2).map { _ in DeploymentMonitor(store: store, signals: nil, clock: clock) }
        async let first = monitors[0].pass()
        async let second = monitors[1].pass()
        let actions = await first + second
        #expect(actions.filter { $0.revision != nil }.count == 1, "\(actions)")
        let record = try await store.deployment(deployment.id, in: Self.c).deployment
        #expect(record.transitions.map(\.state) == [.complete])
    }
}
