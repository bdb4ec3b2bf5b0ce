import DiscfgCore
import Foundation

public struct ValidationChecks: Sendable {
    let conformance: StoreConformance

    public func valueOfExactlyTheLimitIsAccepted() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let value = Data((0..<Limits.maxValueBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            expectEqual(value.count, 256 * 1024)
            let event = try await store.set(Key("/big"), to: value, in: config)
            expectEqual(event.item?.value, value)
            try await expectEqual(store.get(Key("/big"), in: config)?.value, value)
        }
    }

    public func valueOneByteOverTheLimitIsTooLargeAndChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/big", "small", in: config)
            let before = try await store.observableState(of: config)
            try await expectError(.tooLarge, field: "value", mentioning: ["262145"]) {
                try await store.set(Key("/big"), to: Data(count: Limits.maxValueBytes + 1), in: config)
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    /// The arguments ``badContentTypeIsInvalidAndChangesNothing(contentType:)`` is checked with.
    public static let badContentTypeIsInvalidAndChangesNothingArguments: [String] = ["json", "application/", "/json", "text/plain/extra", "text /plain", "text/plain\n", "", "appl\u{E9}cation/json"]

    public func badContentTypeIsInvalidAndChangesNothing(contentType: String) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "v", in: config)
            let before = try await store.observableState(of: config)
            try await expectError(.invalidArgument, field: "contentType") {
                try await store.set("/k", "w", in: config, options: SetOptions(contentType: contentType))
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func validationComesBeforeConditions() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await expectError(.tooLarge) {
                try await store.set(Key("/k"), to: Data(count: Limits.maxValueBytes + 1), in: config, options: SetOptions(conditions: [.exists]))
            }
        }
    }
    public func largestRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "v", in: config)
            let before = try await store.observableState(of: config)
            for from in [Revision.max, Revision.max.next, Revision(UInt64.max)] {
                let batch = try await store.events(in: config, scope: .prefix(.root), from: from, limit: 10)
                expectEmpty(batch.events)
                expect(batch.through >= Revision(1), "the batch read through revision \(batch.through)")
            }
            let history = try await store.history(of: Key("/k"), in: config, HistoryQuery(limit: 10, before: .max))
            expectEqual(history.events.count, 1)
            try await expectError(.invalidArgument) { try await store.get(Key("/k"), in: config, atRevision: .max) }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

}

extension StoreConformance {
    /// The checks of limits and validation, and of revisions at the edge of the range.
    public var validation: ValidationChecks { ValidationChecks(conformance: self) }
}
