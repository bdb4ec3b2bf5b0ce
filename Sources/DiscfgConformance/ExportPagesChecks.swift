import DiscfgCore
import Foundation

/// An export read page by page is the config at one revision, however it changes while
/// the pages are read.
public struct ExportPagesChecks: Sendable {
    let conformance: StoreConformance

    static func path(_ index: Int) -> String { String(format: "/k%02d", index) }

    /// Thirty keys, two of them deleted again, so there is history before the export.
    static func prepare(_ store: any ConfigStore, settings: ConfigSettings = ConfigSettings()) async throws -> ConfigName {
        let config = try await store.makeConfig("app", settings: settings)
        for index in 0..<30 { try await store.set(path(index), "v0-\(index)", in: config) }
        for index in [4, 17] { _ = try await store.delete(Key(path(index)), in: config, conditions: []) }
        return config
    }

    public func keysChangedCreatedAndDeletedBetweenPagesKeepTheExportAtItsRevision() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let expected = try await store.list(in: config, ListQuery(limit: Limits.maxPageSize)).items.map(ConfigSnapshot.Entry.init)
            let revision = try await store.revision(of: config)

            let pages = try await store.exportPages(config, maxBytes: 1)
            expectEqual(pages.header.config, config)
            expectEqual(pages.header.revision, revision)

            // Once the export has pinned its revision, another writer changes keys all
            // through it.
            let writer = Task {
                var step = 0
                while !Task.isCancelled, step < 80 {
                    step += 1
                    let key = Self.path((step * 7) % 34) + (step % 5 == 0 ? "/deep" : "")
                    if step % 3 == 0 {
                        _ = try? await store.delete(Key(key), in: config, conditions: [])
                    } else {
                        _ = try? await store.set(key, "w\(step)", in: config)
                    }
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
            defer { writer.cancel() }

            var exported: [ConfigSnapshot.Entry] = []
            var pageCount = 0
            for try await page in pages {
                pageCount += 1
                exported += page
                if pageCount > 500 {
                    fail("the export did not end after 500 pages")
                    break
                }
                // Between pages: change keys ahead of the export and behind it (only early
                // on, or keys created ahead would keep the export going).
                let next = pageCount + 1
                guard next < 16 else { continue }
                try await store.set(Self.path(next + 2), "changed", in: config)
                _ = try? await store.delete(Key(Self.path(next + 4)), in: config, conditions: [])
                try await store.set(Self.path(next + 1) + "x", "created", in: config)
                _ = try? await store.delete(Key(Self.path(next + 6)), in: config, conditions: [])
                try await store.set(Self.path(next + 6), "recreated", in: config)
                try await store.set(Self.path(max(0, next - 2)), "behind", in: config)
            }
            writer.cancel()
            expect(pageCount > 10, "\(pageCount) page(s): a budget of one byte makes many pages")
            expectEqual(exported.map(\.key.path), exported.map(\.key.path).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            expectEqual(exported, expected)

            // And each key is what a read at that revision says.
            let universe = Set((0..<36).flatMap { [Self.path($0), Self.path($0) + "x", Self.path($0) + "/deep"] })
            var atRevision: [ConfigSnapshot.Entry] = []
            for path in universe.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                if let item = try await store.get(Key(path), in: config, atRevision: revision) { atRevision.append(.init(item)) }
            }
            expectEqual(exported, atRevision)
        }
    }

    public func pagesHoldTheItemsInKeyOrderWithinTheBudget() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store)
            let budget = 40
            let pages = try await store.exportPages(config, maxBytes: budget)
            var exported: [ConfigSnapshot.Entry] = []
            for try await page in pages {
                let cost = page.map(PageBudget.size).reduce(0, +)
                expect(cost <= budget || page.count == 1, "a page of \(cost) bytes")
                exported += page
            }
            try await expectEqual(exported, (store.export(config)).items)
            expectEqual(exported.count, 28)
        }
    }

    /// A store that rebuilds the revision from history says so when that history is gone.
    /// (The remote store's server has finished its export before the first page arrives.)
    public func anExportWhoseHistoryIsCompactedMeanwhileFailsWithCompacted() async throws {
        try await conformance.withStore { store, _ in
            let config = try await Self.prepare(store, settings: ConfigSettings(history: .last(2)))
            let pages = try await store.exportPages(config, maxBytes: 1)
            var iterator = pages.makeAsyncIterator()
            try await expectEqual(iterator.next()?.map(\.key.path), [Self.path(0)])
            for index in 10..<15 { try await store.set(Self.path(index), "changed", in: config) }
            try await expectError(.compacted, mentioning: ["export"]) {
                while try await iterator.next() != nil {}
            }
        }
    }

    /// An export at a past revision is the config as it was then: keys changed, deleted,
    /// created and expired since are as they were, page by page; a revision not yet
    /// reached is refused, and one below the retained history is `compacted`.
    public func anExportAtAPastRevisionIsTheConfigAsItWasThen() async throws {
        try await conformance.withStore { store, clock in
            let config = try await Self.prepare(store)
            try await store.set("/ttl", "short-lived", in: config, options: SetOptions(ttlSeconds: 5))
            let then = try await store.list(in: config, ListQuery(limit: Limits.maxPageSize)).items.map(ConfigSnapshot.Entry.init)
            let past = try await store.revision(of: config)
            expectEqual(then.count, 29)

            try await store.set(Self.path(3), "changed", in: config)
            _ = try await store.delete(Key(Self.path(8)), in: config, conditions: [])
            try await store.set(Self.path(4), "back again", in: config)
            try await store.set("/new", "created after", in: config)
            clock.advance(seconds: 10)
            _ = try await store.sweepExpired()
            let now = try await store.revision(of: config)
            expect(now > past, "revision \(now) is not after \(past)")

            let pages = try await store.exportPages(config, maxBytes: 1, atRevision: past)
            expectEqual(pages.header.revision, past)
            var exported: [ConfigSnapshot.Entry] = []
            for try await page in pages { exported += page }
            expectEqual(exported, then, "the export at \(past) differs from the listing at \(past)")

            let first = try await store.exportPages(config, maxBytes: Limits.maxPageBytes, atRevision: .zero)
            var none: [ConfigSnapshot.Entry] = []
            for try await page in first { none += page }
            expectEqual(first.header.revision, .zero, "at revision 0 the config was empty")
            expectEqual(none, [], "at revision 0 the config was empty")

            let current = try await store.export(config)
            let atNow = try await store.exportPages(config, maxBytes: Limits.maxPageBytes, atRevision: now)
            var same: [ConfigSnapshot.Entry] = []
            for try await page in atNow { same += page }
            expectEqual(same, current.items, "at the current revision it is the current export")

            try await expectError(.invalidArgument) { try await store.exportPages(config, maxBytes: 1, atRevision: now.next) }
            try await expectError(.invalidArgument) { try await store.exportPages(config, maxBytes: 1, atRevision: Revision(UInt64(Int64.max))) }
            _ = try await store.compact(config, through: Revision(past.rawValue + 2))
            try await expectError(.compacted, field: "revision") { try await store.exportPages(config, maxBytes: 1, atRevision: past) }
        }
    }

    public func anUnknownConfigIsReportedBeforeAnyPage() async throws {
        try await conformance.withStore { store, _ in
            try await expectError(.configNotFound) { try await store.exportPages(ConfigName("nope"), maxBytes: Limits.maxPageBytes) }
        }
    }
}

extension StoreConformance {
    /// The checks of export page by page at one revision.
    public var exportPages: ExportPagesChecks { ExportPagesChecks(conformance: self) }
}
