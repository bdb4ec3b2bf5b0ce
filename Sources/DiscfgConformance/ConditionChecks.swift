import DiscfgCore
import Foundation

/// A named list of conditions, so parameterized test names say what was tried.
public struct ConditionCase: Sendable, CustomStringConvertible {
    let name: String
    let conditions: [Condition]

    public var description: String { name }

    init(_ name: String, _ conditions: [Condition]) {
        self.name = name
        self.conditions = conditions
    }

    /// Hold for `/k` after ``ConditionChecks/prepare(_:)``: version 2, modRevision 2, value "v2".
    public static let holdOnExisting = [
        ConditionCase("no conditions", []),
        ConditionCase("version 2", [.version(2)]),
        ConditionCase("modRevision 2", [.modRevision(2)]),
        ConditionCase("value v2", [.value(Data(text: "v2"))]),
        ConditionCase("exists", [.exists]),
        ConditionCase("all four", [.version(2), .modRevision(2), .value(Data(text: "v2")), .exists]),
    ]

    /// Fail for `/k` after ``ConditionChecks/prepare(_:)``.
    public static let failOnExisting = [
        ConditionCase("version 1 (older)", [.version(1)]),
        ConditionCase("version 3 (newer)", [.version(3)]),
        ConditionCase("version 0 (must be absent)", [.version(0)]),
        ConditionCase("modRevision 1", [.modRevision(1)]),
        ConditionCase("modRevision 3 (the config revision)", [.modRevision(3)]),
        ConditionCase("old value", [.value(Data(text: "v1"))]),
        ConditionCase("empty value", [.value(Data())]),
        ConditionCase("exists but wrong version", [.exists, .version(1)]),
        ConditionCase("right version, wrong value", [.version(2), .value(Data(text: "nope"))]),
        ConditionCase("right value, wrong modRevision", [.value(Data(text: "v2")), .modRevision(1)]),
    ]

    /// Fail for a key that does not exist (never created, or deleted).
    public static let failOnAbsent = [
        ConditionCase("exists", [.exists]),
        ConditionCase("version 1", [.version(1)]),
        ConditionCase("modRevision 1", [.modRevision(1)]),
        ConditionCase("empty value", [.value(Data())]),
        ConditionCase("absent and exists", [.version(0), .exists]),
    ]
}

public struct ConditionChecks: Sendable {
    let conformance: StoreConformance

    static let key = try! Key("/k")

    /// `/k` at version 2 (modRevision 2, value "v2"), `/gone` deleted, config at revision 4.
    static func prepare(_ store: any ConfigStore) async throws -> (ConfigName, Item) {
        let config = try await store.makeConfig()
        try await store.set("/k", "v1", in: config)
        let current = try await require(store.set("/k", "v2", in: config).item)
        try await store.set("/gone", "x", in: config)
        _ = try await store.delete(Key("/gone"), in: config, conditions: [])
        return (config, current)
    }

    /// The arguments ``setHappensWhenConditionsHold(condition:)`` is checked with.
    public static let setHappensWhenConditionsHoldArguments: [ConditionCase] = ConditionCase.holdOnExisting

    public func setHappensWhenConditionsHold(condition: ConditionCase) async throws {
        try await conformance.withStore { store, _ in
            let (config, current) = try await Self.prepare(store)
            let event = try await store.set(Self.key, to: Data(text: "v3"), in: config, options: SetOptions(conditions: condition.conditions))
            expectEqual(event.revision, 5)
            expectEqual(event.prevItem, current)
            expectEqual(event.item?.version, 3)
            try await expectEqual(store.get(Self.key, in: config)?.value, Data(text: "v3"))
        }
    }

    /// The arguments ``failedSetReturnsTheCurrentItemAndChangesNothing(condition:)`` is checked with.
    public static let failedSetReturnsTheCurrentItemAndChangesNothingArguments: [ConditionCase] = ConditionCase.failOnExisting

    public func failedSetReturnsTheCurrentItemAndChangesNothing(condition: ConditionCase) async throws {
        try await conformance.withStore { store, _ in
            let (config, current) = try await Self.prepare(store)
            let before = try await store.observableState(of: config)
            let error = try await expectError(.conditionFailed) {
                try await store.set(Self.key, to: Data(text: "v3"), in: config, options: SetOptions(conditions: condition.conditions))
            }
            expectEqual(error.currentItem, current)
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    /// The arguments ``failedSetOnAnAbsentKeyCarriesNoItem(condition:)`` is checked with.
    public static let failedSetOnAnAbsentKeyCarriesNoItemArguments: [ConditionCase] = ConditionCase.failOnAbsent

    public func failedSetOnAnAbsentKeyCarriesNoItem(condition: ConditionCase) async throws {
        try await conformance.withStore { store, _ in
            let (config, _) = try await Self.prepare(store)
            let before = try await store.observableState(of: config)
            for path in ["/never", "/gone"] {
                let error = try await expectError(.conditionFailed, "\(path)") {
                    try await store.set(Key(path), to: Data(text: "new"), in: config, options: SetOptions(conditions: condition.conditions))
                }
                expectNil(error.currentItem)
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func versionZeroCreatesOnlyWhenAbsent() async throws {
        try await conformance.withStore { store, _ in
            let (config, _) = try await Self.prepare(store)
            let created = try await store.set(Key("/never"), to: Data(text: "a"), in: config, options: SetOptions(conditions: [.version(0)]))
            expectEqual(created.item?.version, 1)
            let recreated = try await store.set(Key("/gone"), to: Data(text: "b"), in: config, options: SetOptions(conditions: [.version(0)]))
            expectEqual(recreated.item?.version, 1)
            expectEqual(recreated.revision, 6)
            let error = try await expectError(.conditionFailed) {
                try await store.set(Key("/never"), to: Data(text: "c"), in: config, options: SetOptions(conditions: [.version(0)]))
            }
            expectEqual(error.currentItem, created.item)
        }
    }

    /// The arguments ``deleteHappensWhenConditionsHold(condition:)`` is checked with.
    public static let deleteHappensWhenConditionsHoldArguments: [ConditionCase] = ConditionCase.holdOnExisting

    public func deleteHappensWhenConditionsHold(condition: ConditionCase) async throws {
        try await conformance.withStore { store, _ in
            let (config, current) = try await Self.prepare(store)
            let event = try await store.delete(Self.key, in: config, conditions: condition.conditions)
            expectEqual(event.kind, .delete)
            expectEqual(event.revision, 5)
            expectEqual(event.prevItem, current)
            try await expectNil(store.get(Self.key, in: config))
        }
    }

    /// The arguments ``failedDeleteReturnsTheCurrentItemAndChangesNothing(condition:)`` is checked with.
    public static let failedDeleteReturnsTheCurrentItemAndChangesNothingArguments: [ConditionCase] = ConditionCase.failOnExisting

    public func failedDeleteReturnsTheCurrentItemAndChangesNothing(condition: ConditionCase) async throws {
        try await conformance.withStore { store, _ in
            let (config, current) = try await Self.prepare(store)
            let before = try await store.observableState(of: config)
            let error = try await expectError(.conditionFailed) {
                try await store.delete(Self.key, in: config, conditions: condition.conditions)
            }
            expectEqual(error.currentItem, current)
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    /// The arguments ``failedDeleteOnAnAbsentKeyIsAConditionFailure(condition:)`` is checked with.
    public static let failedDeleteOnAnAbsentKeyIsAConditionFailureArguments: [ConditionCase] = ConditionCase.failOnAbsent

    public func failedDeleteOnAnAbsentKeyIsAConditionFailure(condition: ConditionCase) async throws {
        try await conformance.withStore { store, _ in
            let (config, _) = try await Self.prepare(store)
            let before = try await store.observableState(of: config)
            let error = try await expectError(.conditionFailed) {
                try await store.delete(Key("/never"), in: config, conditions: condition.conditions)
            }
            expectNil(error.currentItem)
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func deleteOfAnAbsentKeyWhoseConditionsHoldIsKeyNotFound() async throws {
        try await conformance.withStore { store, _ in
            let (config, _) = try await Self.prepare(store)
            let before = try await store.observableState(of: config)
            try await expectError(.keyNotFound) { try await store.delete(Key("/gone"), in: config, conditions: [.version(0)]) }
            try await expectEqual(store.observableState(of: config), before)
        }
    }
}

extension StoreConformance {
    /// The checks of conditions (compare-and-swap).
    public var condition: ConditionChecks { ConditionChecks(conformance: self) }
}
