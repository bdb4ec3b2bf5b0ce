/// Turns keys, offered in key order, into one page of a listing: items, and for a
/// non-recursive list the sub-prefixes that stand for deeper keys.
///
/// Stores feed it keys from their own range scans; ``offer(_:)`` tells a scan where it
/// may jump to, so a directory with many deep keys is skipped, not read. A page ends at
/// its count limit or when the next entry would take it over its byte budget
/// (``PageBudget``), and ``isDone`` tells the scan to stop reading.
public struct ListingFolder {
    /// The query being answered.
    public let query: ListQuery
    /// Items gathered so far.
    public private(set) var items: [Item] = []
    /// Sub-prefixes gathered so far.
    public private(set) var prefixes: [KeyPrefix] = []
    /// Set once a page is full and one more entry exists.
    public private(set) var hasMore = false
    private var lastEntry: String?
    private var budget: PageBudget

    /// Starts a page; throws `invalidArgument` for a bad limit or byte budget.
    ///
    /// A cursor is the last entry a page held: the page goes on after it. An empty
    /// cursor, or one before the prefix, starts at the beginning; one after the prefix
    /// gives an empty last page. Any text is a position, so no cursor is an error.
    public init(_ query: ListQuery) throws {
        try Limits.validatePageSize(query.limit)
        try Limits.validatePageBytes(query.maxBytes)
        budget = PageBudget(bytes: query.maxBytes)
        var query = query
        if let cursor = query.cursor, cursor.isEmpty || cursor.utf8.lexicographicallyPrecedes(query.prefix.path.utf8) {
            query.cursor = nil
        }
        self.query = query
        lastEntry = query.cursor
    }

    /// The path a scan starts at (inclusive), honouring the cursor.
    public var scanStart: String {
        guard let cursor = query.cursor else { return query.prefix.path }
        // After a sub-prefix, skip everything under it; after a key, start just past it.
        return cursor.hasSuffix("/") ? String(cursor.dropLast()) + "0" : cursor + "\u{0}"
    }

    /// Whether the page is complete.
    public var isDone: Bool { hasMore }

    private var entryCount: Int { items.count + prefixes.count }

    /// Offers the next live item in key order. Returns a path the scan may jump to
    /// (inclusive) when the item was folded into a sub-prefix, else nil.
    public mutating func offer(_ item: Item) -> String? {
        let rest = item.key.path.dropFirst(query.prefix.path.count)
        var entry = item.key.path
        var subPrefix: KeyPrefix?
        if !query.recursive, let slash = rest.firstIndex(of: "/") {
            let path = query.prefix.path + rest[..<slash] + "/"
            subPrefix = KeyPrefix(validated: path)
            entry = path
        }
        if let lastEntry, !(lastEntry.utf8.lexicographicallyPrecedes(entry.utf8)) {
            return subPrefix?.upperBound
        }
        if entryCount == query.limit || !budget.take(subPrefix.map(PageBudget.size) ?? PageBudget.size(item)) {
            hasMore = true
            return nil
        }
        if let subPrefix { prefixes.append(subPrefix) } else { items.append(item) }
        lastEntry = entry
        return subPrefix?.upperBound
    }

    /// The finished page.
    public func page(revision: Revision) -> ListPage {
        ListPage(items: items, prefixes: prefixes, revision: revision, nextCursor: hasMore ? lastEntry : nil)
    }
}
