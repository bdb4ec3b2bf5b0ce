import DiscfgCore
import Foundation
import Testing

@Suite("Deployment overlay and monitor decisions: what a reader naming an entity sees, and what a monitor records")
struct DeploymentOverlayTests {
    let start: Int64 = 1_767_225_600_000
    let id = "0123456789abcdef"

    func deployment(signals: [DeploymentSignal] = []) throws -> Deployment {
        try Deployment(
            id: id, prefix: try KeyPrefix("/app/"), stableRevision: 4, candidate: DeploymentCandidate(revision: 5),
            strategy: try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: 30, bakeSeconds: 60),
            startedAt: start, message: "", startedBy: "token:ci", signals: signals
        )
    }

    func item(_ path: String, _ text: String, contentType: String? = nil) throws -> Item {
        Item(key: try Key(path), value: Data(text.utf8), contentType: contentType, version: 1, createRevision: 5, modRevision: 5, modifiedAt: Date(), expiresAt: nil)
    }

    func overlay() throws -> DeploymentOverlay {
        DeploymentOverlay(running: [try deployment()], staging: [
            try item("/.discfg/staged/\(id)/app/a", "10"),
            try item("/.discfg/staged/\(id)/app/b", "", contentType: StagedAbsence.contentType),
            try item("/.discfg/staged/ffffffffffffffff/app/a", "99"),
        ])
    }

    @Test("an exposed entity reads the staged values, removals included; others and plain reads read the live ones")
    func exposure() throws {
        let overlay = try overlay()
        let live = [try item("/app/a", "1"), try item("/app/b", "2"), try item("/other", "x")]
        let now = start + 1
        let exposed = (0..<1000).map { "user-\($0)" }.first { Deployment.bucket(deploymentID: id, entity: $0) < 2_000 }!
        let hidden = (0..<1000).map { "user-\($0)" }.first { Deployment.bucket(deploymentID: id, entity: $0) >= 2_000 }!
        let seen = overlay.items(live, under: .root, entity: exposed, at: now).map { "\($0.key.path)=\(String(decoding: $0.value, as: UTF8.self))" }
        #expect(seen == ["/app/a=10", "/other=x"])
        #expect(overlay.items(live, under: .root, entity: hidden, at: now) == live)
        #expect(overlay.items(live, under: .root, entity: nil, at: now) == live)
        #expect(overlay.item(at: try Key("/app/b"), live: live[1], entity: exposed, at: now) == nil)
        #expect(overlay.version(of: try Key("/app/a"), entity: exposed, at: now)?.revision == 5)
        #expect(overlay.version(of: try Key("/app/a"), entity: hidden, at: now)?.revision == 4)
        #expect(overlay.version(of: try Key("/other"), entity: exposed, at: now) == nil)
    }

    @Test("a plain read sees the candidate once the clock makes the deployment COMPLETE, before a monitor records it")
    func plainReadsAtCompletion() throws {
        let overlay = try overlay()
        let live = [try item("/app/a", "1")]
        let end = start + 5 * 30_000 + 60_000
        #expect(overlay.item(at: try Key("/app/a"), live: live[0], entity: nil, at: end - 1) == live[0])
        #expect(overlay.item(at: try Key("/app/a"), live: live[0], entity: nil, at: end).map { String(decoding: $0.value, as: UTF8.self) } == "10")
    }

    @Test("the share grows without taking the candidate from anyone: each entity switches once, at its bucket's step")
    func sticky() throws {
        let overlay = try overlay()
        let live = [try item("/app/a", "1")]
        for entity in (0..<2_000).map({ "host-\($0)" }) {
            var seenCandidate = false
            for second in stride(from: Int64(0), through: 210, by: 5) {
                let value = overlay.item(at: try Key("/app/a"), live: live[0], entity: entity, at: start + second * 1000).map { String(decoding: $0.value, as: UTF8.self) }
                if value == "10" { seenCandidate = true } else { #expect(!seenCandidate, "\(entity) went back at \(second) s") }
            }
        }
    }

    @Test("a monitor records COMPLETE and ROLLED_BACK when their time comes, and rolls back on an unhealthy signal")
    func due() throws {
        let running = try deployment(signals: [.alarm("5xx")])
        let unhealthy = (signal: DeploymentSignal.alarm("5xx"), reading: "ALARM")
        #expect(running.due(at: start + 1, unhealthy: nil) == nil)
        #expect(running.due(at: start + 1, unhealthy: unhealthy)?.kind == .rollingBack)
        #expect(running.due(at: start + 1, unhealthy: unhealthy)?.reason == "signal alarm:5xx: ALARM")
        #expect(running.due(at: start + 210_000, unhealthy: nil)?.kind == .complete)
        let paused = try running.pause(at: start + 10, by: "token:ci", reason: "")
        #expect(paused.due(at: start + 20, unhealthy: unhealthy)?.kind == .rollingBack)
        let rolling = try running.rollback(at: start + 10, by: "token:ci", reason: "")
        #expect(rolling.due(at: start + 11, unhealthy: unhealthy)?.kind == .rolledBack)
    }
}
