import DiscfgCore
import Testing

@Suite("Deployment exposure: which entities see the candidate, computed from the id, the entity and the clock")
struct DeploymentExposureTests {
    let start: Int64 = 1_767_225_600_000
    let entities = (0..<10_000).map { "entity-\($0)" }

    func linear(id: String = "0123456789abcdef", rollback: Int64 = 0) throws -> Deployment {
        try makeDeployment(
            try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: 30, bakeSeconds: 60, rollbackSeconds: rollback), id: id, start: start
        )
    }

    @Test("buckets are MurmurHash3 x86_32 (seed 0) of id, NUL, entity, scaled as (hash·10000)>>32: vectors for other languages")
    func bucketVectors() {
        // Computed by an independent implementation of the documented rule.
        #expect(Deployment.bucket(deploymentID: "0123456789abcdef", entity: "user-1") == 3_151)
        #expect(Deployment.bucket(deploymentID: "0123456789abcdef", entity: "user-2") == 2_148)
        #expect(Deployment.bucket(deploymentID: "3f9c0a1b2c3d4e5f", entity: "émilie") == 6_683)
        #expect(Deployment.bucket(deploymentID: "3f9c0a1b2c3d4e5f", entity: "") == 1_194)
    }

    @Test("an entity sees the candidate exactly when its bucket is below the share")
    func bucketBelowShare() throws {
        let status = try linear().status(at: start + 30_000)
        #expect(status.shareBasisPoints == 4_000)
        #expect(status.exposes(bucket: 3_999))
        #expect(!status.exposes(bucket: 4_000))
        let before = try linear().status(at: start - 1)
        #expect(!before.exposes(bucket: 0), "a share of 0 exposes no one")
        let everyone = try linear().status(at: start + 120_000)
        #expect(everyone.exposes(bucket: 9_999))
        // "user-1" is in bucket 3151: stable at 20 %, candidate from 40 %.
        #expect(try linear().version(for: "user-1", at: start + 29_999) == 41)
        #expect(try linear().version(for: "user-1", at: start + 30_000) == 42)
    }

    @Test("at every step of linear 20 % every 30 s the exposed share of 10,000 entities is within ±3 points of the schedule")
    func sharesFollowSchedule() throws {
        let deployment = try linear()
        for k in 1...5 {
            let at = start + Int64(k - 1) * 30_000
            let exposed = entities.filter { deployment.seesCandidate(entity: $0, at: at) }.count
            let scheduled = deployment.status(at: at).shareBasisPoints
            #expect(scheduled == 2_000 * k)
            #expect(abs(exposed - scheduled) <= 300, "step \(k): \(exposed) of 10000 exposed, scheduled \(scheduled) basis points")
        }
        #expect(entities.allSatisfy { deployment.version(for: $0, at: start + 150_000) == 42 }, "everyone at 100 %")
        #expect(entities.allSatisfy { deployment.version(for: $0, at: start - 1) == 41 }, "no one before the start")
    }

    @Test("sticky: while the share grows, across pauses, no entity goes from candidate back to stable")
    func sticky() throws {
        let deployment = try linear().pause(at: start + 40_000, by: "a", reason: "").resume(at: start + 70_000, by: "a", reason: "")
        let buckets = entities.map(deployment.bucket(of:))
        var had = [Bool](repeating: false, count: entities.count)
        var exposedCount = 0
        for t in stride(from: start - 1_000, through: start + 300_000, by: 777) {
            let status = deployment.status(at: t)
            for index in buckets.indices {
                let sees = status.exposes(bucket: buckets[index])
                #expect(!(had[index] && !sees), "\(entities[index]) lost the candidate at \(t)")
                had[index] = sees
            }
            exposedCount = had.filter { $0 }.count
        }
        #expect(exposedCount == entities.count)
        // The convenience agrees with the status-and-bucket path.
        for entity in entities.prefix(200) {
            #expect(deployment.seesCandidate(entity: entity, at: start + 50_000) == deployment.status(at: start + 50_000).exposes(bucket: deployment.bucket(of: entity)))
        }
    }

    @Test("two deployments with different ids expose different sets: about half overlap at 50 %")
    func independence() throws {
        let one = try linear(id: "0123456789abcdef"), two = try linear(id: "fedcba9876543210")
        let at = start + 60_000  // step 3: 60 %
        let strategy = try DeploymentStrategy(growth: .linear, stepBasisPoints: 5_000, intervalSeconds: 30, bakeSeconds: 0)
        let a = try makeDeployment(strategy, id: one.id, start: start), b = try makeDeployment(strategy, id: two.id, start: start)
        let setA = Set(entities.filter { a.seesCandidate(entity: $0, at: start) })
        let setB = Set(entities.filter { b.seesCandidate(entity: $0, at: start) })
        let overlap = Double(setA.intersection(setB).count) / Double(setA.count)
        #expect(setA != setB)
        #expect((0.45...0.55).contains(overlap), "overlap \(overlap)")
        let bucketsDiffer = entities.filter { one.bucket(of: $0) != two.bucket(of: $0) }.count
        #expect(bucketsDiffer > 9_900)
        #expect(one.status(at: at).shareBasisPoints == 6_000)
    }

    @Test("rollback: the entities exposed last lose the candidate first, and no entity that never had it gets it")
    func rollbackOrder() throws {
        let deployment = try linear(rollback: 90).rollback(at: start + 100_000, by: "system:monitor", reason: "signal health: candidate worse")
        let buckets = Dictionary(uniqueKeysWithValues: entities.map { ($0, deployment.bucket(of: $0)) })
        var firstSeen = [String: Int64](), lost = [String: Int64]()
        for t in stride(from: start, through: start + 200_000, by: 1_000) {
            let status = deployment.status(at: t)
            for entity in entities {
                let sees = status.exposes(bucket: buckets[entity]!)
                if sees, firstSeen[entity] == nil { firstSeen[entity] = t }
                if sees, lost[entity] != nil { Issue.record("\(entity) got the candidate back at \(t)") }
                if !sees, firstSeen[entity] != nil, lost[entity] == nil { lost[entity] = t }
            }
        }
        #expect(firstSeen.count < entities.count, "at 80 % some entities never had it")
        #expect(lost.count == firstSeen.count, "everyone who had it lost it: ROLLED_BACK at 0")
        #expect(deployment.status(at: start + 190_000).state == .rolledBack)
        // Later exposure, earlier loss.
        let order = firstSeen.keys.sorted { firstSeen[$0]! < firstSeen[$1]! }
        let firstExposed = try #require(order.first), lastExposed = try #require(order.last)
        #expect(lost[lastExposed]! < lost[firstExposed]!, "a gradual rollback takes it from the last exposed before the first")
        for (earlier, later) in zip(order, order.dropFirst()) where firstSeen[earlier]! < firstSeen[later]! {
            #expect(lost[later]! <= lost[earlier]!, "\(later) was exposed after \(earlier) but lost it later")
        }
    }
}
