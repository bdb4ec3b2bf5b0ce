import DiscfgCore
import Foundation
import Testing

@Suite("Limits and validation")
struct ValidationTests {
    @Test(arguments: StoreKind.allCases)
    func valueOfExactlyTheLimitIsAccepted(kind: StoreKind) async throws {
        try await kind.withStore { store, _ in
            let config = try await store.makeConfig()
            let value = Data((0..<Limits.maxValueBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            #expect(value.count == 256 * 1024)
            let event = try await store.set(Key("/big"), to: value, in: config)
            #expect(event.item?.value == value)
            #expect(try await store.get(Key("/big"), in: config)?.value == value)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func valueOneByteOverTheLimitIsTooLargeAndChangesNothing(kind: StoreKind) async throws {
        try await kind.withStore { store, _ in
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

    @Test(arguments: StoreKind.allCases, ["json", "application/", "/json", "text/plain/extra", "text /plain", "text/plain\n", "", "appl\u{E9}cation/json"])
    func badContentTypeIsInvalidAndChangesNothing(kind: StoreKind, contentType: String) async throws {
        try await kind.withStore { store, _ in
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

    @Test(arguments: StoreKind.allCases)
    func validationComesBeforeConditions(kind: StoreKind) async throws {
        try await kind.withStore { store, _ in
            let config = try await store.makeConfig()
            await expectError(.tooLarge) {
                try await store.set(Key("/k"), to: Data(count: Limits.maxValueBytes + 1), in: config, options: SetOptions(conditions: [.exists]))
            }
        }
    }
}

@Suite("Revisions at the edge of the range")
struct RevisionEdgeTests {
    @Test("reads, history and watches from the largest revision answer without trapping", arguments: StoreKind.allCases)
    func largestRevision(kind: StoreKind) async throws {
        try await kind.withStore { store, _ in
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

    @Test("next stays at the largest revision; a change past it is refused")
    func arithmetic() {
        #expect(Revision.max.next == .max)
        #expect(Revision(UInt64.max).next == Revision(UInt64.max))
        #expect(Revision.zero.previous == .zero)
        #expect(Revision(UInt64.max).storageValue == Int64.max)
        #expect(throws: DiscfgError.self) { try Revision.max.successor() }
        #expect((try? Revision(41).successor()) == Revision(42))
    }
}
