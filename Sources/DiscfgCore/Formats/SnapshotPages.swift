import Foundation
import Synchronization

/// What a snapshot says about itself: the config, the revision its items are at, and
/// when it was taken.
public struct SnapshotHeader: Hashable, Sendable {
    /// The config exported.
    public var config: ConfigName
    /// The revision every item is at.
    public var revision: Revision
    /// When the export was taken; items expired by then are left out.
    public var exportedAt: Date

    /// Creates a header.
    public init(config: ConfigName, revision: Revision, exportedAt: Date) {
        self.config = config
        self.revision = revision
        self.exportedAt = exportedAt
    }
}

/// A config's items at one revision, as pages read one at a time when asked for, so an
/// export holds about one page in memory however large the config is.
///
/// ```swift
/// let pages = try await store.exportPages(app, maxBytes: Limits.maxPageBytes)
/// print(pages.header.revision)
/// for try await page in pages { for entry in page { print(entry.key) } }
/// ```
public struct SnapshotPages: AsyncSequence, Sendable {
    public typealias Element = [ConfigSnapshot.Entry]

    /// The config and revision the pages are at.
    public let header: SnapshotHeader
    private let read: @Sendable () async throws -> Element?

    /// Pages produced by `next`, which returns nil after the last page.
    public init(header: SnapshotHeader, next: @escaping @Sendable () async throws -> Element?) {
        self.header = header
        read = next
    }

    /// The pages of a snapshot already in memory (a remote store's download), cut to
    /// `maxBytes` each.
    public init(_ snapshot: ConfigSnapshot, header: SnapshotHeader, maxBytes: Int) {
        let rest = Mutex(snapshot.items[...])
        self.init(header: header) {
            rest.withLock { rest in
                guard !rest.isEmpty else { return nil }
                var budget = PageBudget(bytes: maxBytes)
                let count = rest.prefix { budget.take(PageBudget.size($0)) }.count
                defer { rest = rest.dropFirst(count) }
                return Array(rest.prefix(count))
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(read: read) }

    /// The same pages, each passed through `transform` as it is read.
    public func mapPages(_ transform: @escaping @Sendable (Element) async throws -> Element) -> SnapshotPages {
        let read = self.read
        return SnapshotPages(header: header) {
            guard let page = try await read() else { return nil }
            return try await transform(page)
        }
    }

    /// Reads the next page when asked.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let read: @Sendable () async throws -> Element?

        public mutating func next() async throws -> Element? { try await read() }
    }
}
