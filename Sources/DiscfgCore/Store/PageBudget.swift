/// The bytes a page of keys, history or events may hold, counted while a store reads it,
/// so a store stops reading once the page is full rather than reading a whole page by
/// count and cutting it afterwards: `limit=1000` over 256 KiB values reads about
/// 4 MiB, not 256 MB.
///
/// An entry costs its key path's bytes plus its value's bytes; an event also its
/// previous value's. The first entry of a page is always taken, however large, so paging
/// always moves on; after that an entry that would take the total over the budget ends
/// the page, and the page's cursor continues right before that entry.
///
/// ```swift
/// var budget = PageBudget(bytes: query.maxBytes)
/// for item in rows {
///     guard budget.take(PageBudget.size(item)) else { break } // the page is full
///     page.append(item)
/// }
/// ```
public struct PageBudget: Hashable, Sendable {
    /// The most bytes of keys and values in one page.
    public let bytes: Int
    /// Bytes taken so far.
    public private(set) var used = 0
    /// Entries taken so far.
    public private(set) var count = 0

    /// A budget of `bytes` (at least one entry is always taken).
    public init(bytes: Int) {
        self.bytes = bytes
    }

    /// Takes an entry of `size` bytes if it fits, or if it is the page's first.
    /// - Returns: false when the page is full; the entry then belongs to the next page.
    public mutating func take(_ size: Int) -> Bool {
        if count > 0, used + size > bytes { return false }
        used += size
        count += 1
        return true
    }

    /// What an item costs: its key path and its value.
    public static func size(_ item: Item) -> Int { item.key.path.utf8.count + item.value.count }

    /// What an event costs: its key path, its value and its previous value.
    public static func size(_ event: Event) -> Int {
        event.key.path.utf8.count + (event.item?.value.count ?? 0) + (event.prevItem?.value.count ?? 0)
    }

    /// What a snapshot entry costs: its key path and its value.
    public static func size(_ entry: ConfigSnapshot.Entry) -> Int { entry.key.path.utf8.count + entry.value.count }

    /// What a folded sub-prefix of a non-recursive listing costs: its path.
    public static func size(_ prefix: KeyPrefix) -> Int { prefix.path.utf8.count }
}
