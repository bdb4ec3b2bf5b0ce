import DiscfgConformance
import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// `DiscfgConformance` is usable on its own: any store can run every check, and a store
/// that breaks the rules is caught by name.
@Suite("The conformance suite as a library")
struct ConformanceLibraryTests {
    @Test("runAll runs every check on a store and it passes")
    func memoryStorePassesEveryCheck() async throws {
        let suite = StoreConformance(name: "memory", capabilities: .all) { clock in StoreConformance.Fixture(store: MemoryStore(clock: clock)) }
        let ran = try await suite.runAll()
        #expect(ran == suite.checks.count)
        #expect(Set(suite.checks.map(\.name)).count == suite.checks.count, "two checks share a name")
        // Every area of store behaviour is in it, parameterized checks once per argument.
        for area in ["Attribution", "Concurrency", "Condition", "ConfigLifecycle", "ExportPages", "History", "ImportExport", "Item", "List", "PageBudget", "Quota", "TTL", "TokenStore", "LeaseStore", "Transaction", "NestedTransaction", "Validation", "Watch", "JSONValue", "Patch", "Document", "Schema", "BulkChange", "ImportOption", "FlagSet"] {
            #expect(suite.checks.contains { $0.name.hasPrefix(area + "Checks.") }, "no \(area) checks")
        }
        // A store without a capability is not checked for it.
        let plain = StoreConformance(name: "plain") { clock in StoreConformance.Fixture(store: MemoryStore(clock: clock)) }
        let capabilityChecks = suite.checks.map(\.name).filter {
            $0.hasPrefix("TokenStoreChecks.") || $0.hasPrefix("LeaseStoreChecks.") || $0.hasPrefix("NestedTransactionChecks.")
                || $0 == "ExportPagesChecks.anExportWhoseHistoryIsCompactedMeanwhileFailsWithCompacted()"
                || $0.hasPrefix("BulkChangeChecks.aFiveThousand") || $0.hasPrefix("BulkChangeChecks.readersSeeAFiveThousand")
        }
        #expect(Set(suite.checks.map(\.name)).subtracting(plain.checks.map(\.name)) == Set(capabilityChecks))
        #expect(plain.checks.count == suite.checks.count - capabilityChecks.count)
    }

    @Test("every check declared in DiscfgConformance is registered, once per argument, and runs against every store that declares what it checks")
    func registryMatchesTheSources() throws {
        let sources = try ConformanceSources()
        let suite = StoreConformance(name: "memory", capabilities: .all) { clock in StoreConformance.Fixture(store: MemoryStore(clock: clock)) }
        #expect(sources.declared.count > 100, "the check sources were not read")
        // Registered is declared: no check function is left out of `checks`, none listed twice.
        #expect(Set(suite.checks.map(\.method)) == Set(sources.declared.map(\.method)))
        #expect(Set(sources.declared).count == sources.declared.count)
        // A check that takes an argument is registered per argument, named with it; one that
        // takes none, once.
        for declared in sources.declared {
            let registered = suite.checks.filter { $0.method == declared.method }
            if let label = declared.argumentLabel {
                #expect(registered.allSatisfy { $0.name.hasPrefix("\(declared.method)(\(label): ") }, "\(registered)")
            } else {
                #expect(registered.map(\.name) == ["\(declared.method)()"])
            }
        }
        // Each kind of store runs, in this target's tests, exactly the checks its
        // capabilities register.
        for kind in StoreKind.allCases {
            let registered = Set(kind.conformance.checks.map(\.method))
            let run = Set(sources.runAgainst.filter { $0.value.contains(kind) }.keys)
            #expect(registered.subtracting(run).isEmpty, "\(kind): registered, not run: \(registered.subtracting(run).sorted())")
            #expect(run.subtracting(registered).isEmpty, "\(kind): run, not registered: \(run.subtracting(registered).sorted())")
        }
    }

    @Test("a store that ignores compare-and-swap conditions fails the condition checks")
    func storeIgnoringConditionsIsCaught() async throws {
        let suite = StoreConformance(name: "unconditional") { clock in
            StoreConformance.Fixture(store: IgnoresConditions(MemoryStore(clock: clock)))
        }
        let check = try #require(suite.checks.first { $0.name.hasPrefix("ConditionChecks.failedSetReturnsTheCurrentItemAndChangesNothing") })
        // The store applies a set whose condition fails: the check throws what it expected
        // instead, at the line of the check that expected it.
        let failure = try #require(await #expect(throws: StoreConformance.CheckFailure.self) { try await check.run() })
        #expect(failure.store == "unconditional")
        #expect(failure.expectations.count == 1, "\(failure)")
        let expectation = try #require(failure.expectations.first)
        #expect(expectation.fileID == "DiscfgConformance/ConditionChecks.swift")
        #expect(expectation.message.hasPrefix("expected DiscfgError .conditionFailed, got success"), "\(expectation)")
        #expect(failure.description.contains("DiscfgConformance/ConditionChecks.swift:\(expectation.line): expected DiscfgError"))
        // Checks of behaviour the store keeps still pass.
        try await suite.item.firstSetCreatesVersionOneAtRevisionOne()
    }

    @Test("a failed expectation names its line and both values, and the check runs on to its end")
    func failedExpectationShowsBothValues() async throws {
        let suite = StoreConformance(name: "off by one") { clock in
            StoreConformance.Fixture(store: MisreportsRevisions(MemoryStore(clock: clock)))
        }
        let failure = try #require(await #expect(throws: StoreConformance.CheckFailure.self) {
            try await suite.item.firstSetCreatesVersionOneAtRevisionOne()
        })
        // The set's event says revision 2; every other expectation of the check holds.
        #expect(failure.expectations.map(\.fileID) == ["DiscfgConformance/ItemChecks.swift"], "\(failure)")
        #expect(failure.expectations.first?.message == "2 is not 1")
        #expect(failure.description.hasPrefix("1 expectation failed on store off by one:\n  DiscfgConformance/ItemChecks.swift:"))
    }

    @Test("a store that patches by reading and then setting the value loses concurrent members, and the patch checks say so")
    func storePatchingOutsideItsChangeIsCaught() async throws {
        let suite = StoreConformance(name: "read then set") { clock in
            StoreConformance.Fixture(store: PatchesByReadThenSet(MemoryStore(clock: clock)))
        }
        let failure = try #require(await #expect(throws: StoreConformance.CheckFailure.self) {
            try await suite.patch.concurrentMergePatchesLoseNoMember()
        })
        #expect(failure.expectations.allSatisfy { $0.fileID == "DiscfgConformance/PatchChecks.swift" }, "\(failure)")
        #expect(failure.expectations.contains { $0.message.hasPrefix("members lost") }, "\(failure)")
        // One patch at a time, it does what a patch does.
        try await suite.patch.aMergePatchChangesMembersAndKeepsTypeAndTTL()
    }

    @Test("runAll names the checks that threw, after running them all")
    func runAllNamesFailures() async throws {
        let suite = StoreConformance(name: "unopenable") { _ in throw DiscfgError(.unavailable, "this store cannot be opened") }
        do {
            try await suite.runAll(skipping: Set(suite.checks.dropFirst(2).map(\.name)))
            Issue.record("runAll did not report the failures")
        } catch let failures as StoreConformance.Failures {
            #expect(failures.store == "unopenable")
            #expect(failures.checks.count == 2)
            #expect(failures.checks.allSatisfy { $0.contains("this store cannot be opened") })
            #expect(failures.checks.first?.hasPrefix(suite.checks[0].name) == true)
        }
    }
}

/// A memory store whose sets report one revision more than they made.
struct MisreportsRevisions: ForwardingStore {
    let base: MemoryStore
    var forwardee: any ConfigStore { base }
    init(_ base: MemoryStore) { self.base = base }

    func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        var event = try await base.set(key, to: value, in: config, options: options)
        event.revision = event.revision.next
        return event
    }
}

/// A memory store that drops every condition of a set: the compare-and-swap bug the
/// condition checks exist to catch.
struct IgnoresConditions: ForwardingStore {
    let base: MemoryStore
    var forwardee: any ConfigStore { base }
    init(_ base: MemoryStore) { self.base = base }

    func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        var options = options
        options.conditions = []
        return try await base.set(key, to: value, in: config, options: options)
    }
}

/// A memory store that patches as a client could: read the value, merge, set it back,
/// letting other tasks run in between. Concurrent patches then overwrite each other.
struct PatchesByReadThenSet: ForwardingStore {
    let base: MemoryStore
    var forwardee: any ConfigStore { base }
    init(_ base: MemoryStore) { self.base = base }

    func patch(_ key: Key, _ patch: ValuePatch, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        guard let current = try await base.get(key, in: config), case .merge(let merge) = patch else {
            return try await base.patch(key, patch, in: config, conditions: conditions)
        }
        await Task.yield()
        let merged = MergePatch.apply(merge, to: try JSONParser.parse(Array(current.value)))
        let ttl = current.expiresAt.map { Int64($0.timeIntervalSince(current.modifiedAt).rounded(.up)) }
        return try await base.set(key, to: Data(try JSONSerializer.serialize(merged)), in: config, options: SetOptions(conditions: conditions, ttlSeconds: ttl, contentType: current.contentType))
    }
}
