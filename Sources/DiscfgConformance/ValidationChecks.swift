import DiscfgCore
import Foundation
import Testing

public struct ValidationChecks: Sendable {
    let conformance: StoreConformance

    public func valueOfExactlyTheLimitIsAccepted() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let value = Data((0..<Limits.maxValueBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            #expect(value.count == 256 * 1024)
            let event = try await store.set(Key("/big"), to: value, in: config)
            #expect(event.item?.value == value)
            #expect(try await store.get(Key("/big"), in: config)?.value == value)
        }
    }

    public func valueOneByteOverTheLimitIsTooLargeAndChangesNothing() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/big", "small", in: config)
            let before = try await store.observableState(of: config)
            let error = await expectError(.tooLarge) {
                try await store.set(Key("/big"), to: Data(count: Limits.maxValueBytes + 1), in: config)
            }
            #expect(error?.field == "value")
            #expect(error?.message.contains("262145") == true)
            #expect(try await store.observableState(of: config) == before)
        }
    }

    /// The arguments ``badContentTypeIsInvalidAndChangesNothing(contentType:)`` is checked with.
    public static let badContentTypeIsInvalidAndChangesNothingArguments: [String] = ["json", "application/", "/json", "text/plain/extra", "text /plain", "text/plain\n", "", "appl\u{E9}cation/json"]

    public func badContentTypeIsInvalidAndChangesNothing(contentType: String) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            try await store.set("/k", "v", in: config)
            let before = try await store.observableState(of: config)
            let error = await expectError(.invalidArgument) {
                try await store.set("/k", "w", in: config, options: SetOptions(contentType: contentType))
            }
            #expect(error?.field == "contentType")
            #expect(try await store.observableState(of: config) == before)
        }
    }

    public func validationComesBeforeConditions() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            await expectError(.tooLarge) {
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
                #expect(batch.events.isEmpty)
                #expect(batch.through >= Revision(1))
            }
            let history = try await store.history(of: Key("/k"), in: config, HistoryQuery(limit: 10, before: .max))
            #expect(history.events.count == 1)
            _ = await expectError(.invalidArgument) { try await store.get(Key("/k"), in: config, atRevision: .max) }
            #expect(try await store.observableState(of: config) == before)
        }
    }

}

extension StoreConformance {
    /// The checks of limits and validation, and of revisions at the edge of the range.
    public var validation: ValidationChecks { ValidationChecks(conformance: self) }
}
