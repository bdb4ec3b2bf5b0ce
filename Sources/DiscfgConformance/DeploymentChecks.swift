import DiscfgCore
import Foundation

/// Staged deployments: a start stages the candidate and leaves the live keys as they are;
/// while it runs, writes under its prefix and a second deployment over it are refused;
/// COMPLETE makes the candidate live in one change, ROLLED_BACK drops it, REVERTED puts the
/// stable values back; a transition made against a record that moved on writes nothing.
public struct DeploymentChecks: Sendable {
    let conformance: StoreConformance

    /// `/app/a` = 1, `/app/b` = 2, `/other` = x.
    private func seed(_ store: any ConfigStore) async throws -> ConfigName {
        let config = try await store.makeConfig()
        try await store.set("/app/a", "1", in: config)
        try await store.set("/app/b", "2", in: config)
        try await store.set("/other", "x", in: config)
        return config
    }

    /// A candidate for `/app/`: a = 10, c = 3, and (replacing) no b.
    private func plan(_ strategy: DeploymentStrategy, prefix: String = "/app/", id: String = "00000000000000a1") throws -> DeploymentPlan {
        DeploymentPlan(
            id: id, prefix: try KeyPrefix(prefix),
            entries: [.init(key: try Key("/app/a"), value: Data(text: "10")), .init(key: try Key("/app/c"), value: Data(text: "3"))],
            replace: true, strategy: strategy, message: "raise a"
        )
    }

    private func linear() throws -> DeploymentStrategy {
        try DeploymentStrategy(growth: .linear, stepBasisPoints: 5000, intervalSeconds: 60, bakeSeconds: 60)
    }

    private func values(_ store: any ConfigStore, _ config: ConfigName, under prefix: String = "/app/") async throws -> [String: String] {
        var found: [String: String] = [:]
        for item in try await store.items(in: config, under: KeyPrefix(prefix)).items { found[item.key.path] = String(decoding: item.value, as: UTF8.self) }
        return found
    }

    private func seen(_ overlay: DeploymentOverlay, _ store: any ConfigStore, _ config: ConfigName, entity: String?, at now: Int64) async throws -> [String: String] {
        let live = try await store.items(in: config, under: KeyPrefix("/app/")).items
        var found: [String: String] = [:]
        for item in overlay.items(live, under: try KeyPrefix("/app/"), entity: entity, at: now) { found[item.key.path] = String(decoding: item.value, as: UTF8.self) }
        return found
    }

    public func aStartStagesTheCandidateAndLeavesTheLiveKeys() async throws {
        try await conformance.withStore { store, clock in
            let config = try await seed(store)
            let before = try await store.revision(of: config)
            let outcome = try await store.changeDeployment(.start(plan(.predefined(named: "AllAtOnce"))), in: config)
            expectEqual(outcome.revision, try before.successor(), "a start is one change")
            expectEqual(outcome.deployment.stableRevision, before)
            expectEqual(outcome.deployment.candidateRevision, outcome.revision)
            expectEmpty(outcome.liveEvents, "a start writes no live key")
            try await expectEqual(values(store, config), ["/app/a": "1", "/app/b": "2"], "the live keys are the stable version")
            let listing = try await store.deployments(in: config)
            expectEqual(listing.running.map(\.id), ["00000000000000a1"])
            expectEqual(listing.running.first?.message, "raise a")
            let overlay = try await store.deploymentOverlay(in: config)
            let now = clock.now().milliseconds
            try await expectEqual(seen(overlay, store, config, entity: "user-1", at: now), ["/app/a": "10", "/app/c": "3"], "an exposed entity reads the candidate")
            try await expectEqual(seen(overlay, store, config, entity: nil, at: now), ["/app/a": "1", "/app/b": "2"], "a plain read before COMPLETE reads the stable version")
            expectEqual(overlay.item(at: try Key("/app/b"), live: nil, entity: "user-1", at: now), nil, "the candidate removes /app/b")
        }
    }

    public func writesUnderARunningDeploymentAreRefusedNamingIt() async throws {
        try await conformance.withStore { store, _ in
            let config = try await seed(store)
            _ = try await store.changeDeployment(.start(plan(linear())), in: config)
            let before = try await store.observableState(of: config)
            let named = ["00000000000000a1", "/app/"]
            try await expectError(.conditionFailed, "set", mentioning: named) { try await store.set("/app/a", "5", in: config) }
            try await expectError(.conditionFailed, "new key", mentioning: named) { try await store.set("/app/new", "5", in: config) }
            try await expectError(.conditionFailed, "delete", mentioning: named) { try await store.delete(Key("/app/b"), in: config, conditions: []) }
            try await expectError(.conditionFailed, "delete the config's keys", mentioning: named) { try await store.deletePrefix(.root, in: config) }
            try await expectError(.conditionFailed, "transaction", mentioning: named) {
                try await store.transact(Transaction(success: [.put(Key("/other"), Data(text: "y")), .put(Key("/app/a"), Data(text: "6"))]), in: config)
            }
            try await expectError(.conditionFailed, "import", mentioning: named) {
                try await store.importSnapshot(ConfigSnapshot(items: [.init(key: Key("/app/a"), value: Data(text: "7"))]), into: config, replace: false)
            }
            try await expectEqual(store.observableState(of: config), before, "a refused write changes nothing")
            try await store.set("/other", "y", in: config)
            try await expectError(.invalidArgument, "a record written as a key", mentioning: ["/.discfg/deploying/x"]) {
                try await store.set("/.discfg/deploying/x", "{}", in: config)
            }
        }
    }

    public func oneDeploymentRunsOnAPrefixAtATime() async throws {
        try await conformance.withStore { store, _ in
            let config = try await seed(store)
            _ = try await store.changeDeployment(.start(plan(linear())), in: config)
            let before = try await store.observableState(of: config)
            for (prefix, id) in [("/", "00000000000000b1"), ("/app/", "00000000000000b2")] {
                try await expectError(.conditionFailed, prefix, mentioning: ["00000000000000a1"]) {
                    try await store.changeDeployment(.start(plan(linear(), prefix: prefix, id: id)), in: config)
                }
            }
            try await expectEqual(store.observableState(of: config), before)
            let other = DeploymentPlan(id: "00000000000000b3", prefix: try KeyPrefix("/web/"), entries: [.init(key: try Key("/web/x"), value: Data(text: "1"))], replace: false, strategy: try linear())
            _ = try await store.changeDeployment(.start(other), in: config)
            try await expectEqual(store.deployments(in: config).running.map(\.id), ["00000000000000a1", "00000000000000b3"])
            try await expectError(.invalidArgument, "an empty candidate", mentioning: ["nothing to deploy"]) {
                try await store.changeDeployment(.start(DeploymentPlan(prefix: KeyPrefix("/other/"), entries: [], replace: false, strategy: linear())), in: config)
            }
            try await expectError(.invalidArgument, "a key outside the prefix", mentioning: ["/other"]) {
                try await store.changeDeployment(.start(DeploymentPlan(prefix: KeyPrefix("/z/"), entries: [.init(key: Key("/other"), value: Data(text: "1"))], replace: false, strategy: linear())), in: config)
            }
        }
    }

    public func completeMakesTheCandidateLiveAndRevertPutsTheStableBack() async throws {
        try await conformance.withStore { store, clock in
            let config = try await seed(store)
            _ = try await store.changeDeployment(.start(plan(linear())), in: config)
            try await expectError(.invalidArgument, "complete before the schedule ends", mentioning: ["DEPLOYING"]) {
                try await store.changeDeployment(.transition(id: "00000000000000a1", .complete, reason: "", after: 0), in: config)
            }
            clock.advance(seconds: 181)
            let before = try await store.revision(of: config)
            let done = try await store.changeDeployment(.transition(id: "00000000000000a1", .complete, reason: "schedule ended", after: 0), in: config)
            expectEqual(done.revision, try before.successor(), "COMPLETE is one change")
            expectEqual(Set(done.liveEvents.map(\.key.path)), ["/app/a", "/app/b", "/app/c"])
            try await expectEqual(values(store, config), ["/app/a": "10", "/app/c": "3"], "the candidate is live")
            let listing = try await store.deployments(in: config)
            expectEmpty(listing.running)
            expectEqual(listing.ended.map { $0.status(at: clock.now().milliseconds).state }, [.complete])
            try await expectEqual(store.deploymentOverlay(in: config), .none)
            try await store.set("/other", "z", in: config)
            _ = try await store.changeDeployment(.transition(id: "00000000000000a1", .reverted, reason: "undo", after: 1), in: config)
            try await expectEqual(values(store, config), ["/app/a": "1", "/app/b": "2"], "a revert puts the stable version back")
            try await expectError(.invalidArgument, "a second revert", mentioning: ["REVERTED"]) {
                try await store.changeDeployment(.transition(id: "00000000000000a1", .reverted, reason: "", after: nil), in: config)
            }
            try await store.set("/app/a", "2", in: config)
        }
    }

    public func aRevertOverALaterChangeIsRefused() async throws {
        try await conformance.withStore { store, clock in
            let config = try await seed(store)
            _ = try await store.changeDeployment(.start(plan(linear())), in: config)
            clock.advance(seconds: 181)
            _ = try await store.changeDeployment(.transition(id: "00000000000000a1", .complete, reason: "", after: nil), in: config)
            try await store.set("/app/c", "4", in: config)
            let before = try await store.observableState(of: config)
            try await expectError(.conditionFailed, mentioning: ["/app/c"]) {
                try await store.changeDeployment(.transition(id: "00000000000000a1", .reverted, reason: "", after: nil), in: config)
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func aRollbackDropsTheCandidateAndFreesThePrefix() async throws {
        try await conformance.withStore { store, clock in
            let config = try await seed(store)
            _ = try await store.changeDeployment(.start(plan(linear())), in: config)
            clock.advance(seconds: 70)
            let rolling = try await store.changeDeployment(.transition(id: "00000000000000a1", .rollingBack, reason: "alarm", after: 0), in: config)
            expectEqual(rolling.deployment.status(at: clock.now().milliseconds).state, .rolledBack, "a rollback over 0 seconds is at 0 at once")
            let before = try await store.observableState(of: config)
            try await expectError(.conditionFailed, "a stale transition", mentioning: ["changed since it was read"]) {
                try await store.changeDeployment(.transition(id: "00000000000000a1", .rolledBack, reason: "", after: 0), in: config)
            }
            try await expectEqual(store.observableState(of: config), before, "a stale transition writes nothing")
            let ended = try await store.changeDeployment(.transition(id: "00000000000000a1", .rolledBack, reason: "", after: 1), in: config)
            expectEmpty(ended.liveEvents, "a rollback changes no live key")
            try await expectEqual(values(store, config), ["/app/a": "1", "/app/b": "2"])
            try await expectEmpty(store.items(in: config, under: DeploymentKeys.staging).items, "the staging is gone")
            try await store.set("/app/a", "5", in: config)
            try await expectError(.keyNotFound, "an unknown deployment", mentioning: ["00000000000000ff"]) {
                try await store.changeDeployment(.transition(id: "00000000000000ff", .paused, reason: "", after: nil), in: config)
            }
        }
    }

    public func anExportWithDeploymentsImportsWithoutThem() async throws {
        try await conformance.withStore { store, clock in
            let config = try await seed(store)
            _ = try await store.changeDeployment(.start(plan(linear())), in: config)
            _ = try await store.changeDeployment(.start(DeploymentPlan(
                id: "00000000000000b1", prefix: try KeyPrefix("/web/"), entries: [.init(key: try Key("/web/x"), value: Data(text: "1"))], replace: false, strategy: try linear()
            )), in: config)
            clock.advance(seconds: 181)
            _ = try await store.changeDeployment(.transition(id: "00000000000000b1", .complete, reason: "", after: 0), in: config)
            let snapshot = try await store.export(config)
            expect(snapshot.items.contains { DeploymentKeys.holds($0.key) }, "an export carries the deployments' records")
            let copy = try await store.makeConfig("copy")
            _ = try await store.importSnapshot(snapshot, into: copy, replace: false)
            try await expectEqual(values(store, copy), ["/app/a": "1", "/app/b": "2"])
            try await expectEqual(store.deployments(in: copy).all, [], "no deployment comes with an import")
            try await store.set("/app/a", "3", in: copy)
        }
    }

    public func aCandidateThatBreaksASchemaIsRefused() async throws {
        try await conformance.withStore { store, _ in
            let config = try await seed(store)
            _ = try await store.setSchema(SchemaTarget("/app/a"), to: Data(text: #"{"type": "integer", "maximum": 5}"#), in: config, force: true)
            let before = try await store.observableState(of: config)
            try await expectError(.schemaViolation, mentioning: ["/app/a"]) { try await store.changeDeployment(.start(plan(linear())), in: config) }
            try await expectEqual(store.observableState(of: config), before, "nothing is staged")
        }
    }
}

extension StoreConformance {
    public var deployments: DeploymentChecks { DeploymentChecks(conformance: self) }
}
