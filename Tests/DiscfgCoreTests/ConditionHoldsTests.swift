import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Condition")
struct ConditionHoldsTests {
    static let item = Item(
        key: try! Key("/k"), value: Data("v".utf8), version: 2, createRevision: 3, modRevision: 5, modifiedAt: Date(milliseconds: 0)
    )

    @Test(arguments: [
        (Condition.version(2), true), (.version(1), false), (.version(3), false), (.version(0), false),
        (.modRevision(5), true), (.modRevision(3), false), (.modRevision(0), false),
        (.value(Data("v".utf8)), true), (.value(Data("V".utf8)), false), (.value(Data()), false), (.value(Data("v\0".utf8)), false),
        (.exists, true),
    ])
    func holdsAgainstAnExistingItem(condition: Condition, expected: Bool) {
        #expect(condition.holds(for: Self.item) == expected)
    }

    @Test(arguments: [
        (Condition.version(0), true), (.version(1), false), (.modRevision(0), false), (.modRevision(1), false),
        (.value(Data()), false), (.exists, false),
    ])
    func holdsAgainstAnAbsentItem(condition: Condition, expected: Bool) {
        #expect(condition.holds(for: nil) == expected)
    }

    @Test func checkThrowsTheFirstFailureWithTheCurrentItem() throws {
        let key = try Key("/k")
        try [Condition.exists, .version(2)].check(against: Self.item, key: key)
        try [Condition]().check(against: nil, key: key)
        let error = try expectError(.conditionFailed, field: "condition") {
            try [Condition.exists, .version(1), .modRevision(9)].check(against: Self.item, key: key)
        }
        #expect(error.currentItem == Self.item)
        #expect(error.message == "condition failed for /k: version is 2, expected 1")
    }

    @Test(arguments: [
        (Condition.version(0), "key already exists (version 2)"), (.version(7), "version is 2, expected 7"),
        (.modRevision(1), "modRevision is 5, expected 1"), (.value(Data()), "value differs from the expected value"),
    ])
    func failureExplanationsNameWhatDiffered(condition: Condition, explanation: String) {
        #expect(condition.explainFailure(for: Self.item) == explanation)
    }

    @Test func failureOnAnAbsentKeyCarriesNoItem() throws {
        let error = try expectError(.conditionFailed, mentioning: ["does not exist"]) {
            try [Condition.exists].check(against: nil, key: Key("/gone"))
        }
        #expect(error.currentItem == nil)
    }
}
