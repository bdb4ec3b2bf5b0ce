import DiscfgCore

/// Caps a page by the bytes of its values as well as by its count, so `limit=1000` of
/// large values does not become a response of hundreds of megabytes. A page cut short
/// ends with a cursor (or revision) that continues after its last entry, and always
/// holds at least one entry, so paging always moves on.
struct PageBudget {
    /// The most bytes of keys and values in one page.
    let bytes: Int

    /// How many of the leading entries, of the sizes given, fit (at least one when any).
    func count(fitting sizes: some Sequence<Int>) -> Int {
        var total = 0
        var count = 0
        for size in sizes {
            total += size
            if count > 0, total > bytes { break }
            count += 1
        }
        return count
    }

    /// The page cut to the budget; its cursor continues after the last item kept.
    func cut(_ page: ListPage) -> ListPage {
        let kept = count(fitting: page.items.map(Self.size))
        guard kept < page.items.count else { return page }
        var cut = page
        let last = page.items[kept - 1].key.path
        cut.items = Array(page.items.prefix(kept))
        // Folders sort among the keys: keep those before the cut, the next page has the rest.
        cut.prefixes = page.prefixes.filter { $0.path < last }
        cut.nextCursor = last
        return cut
    }

    /// The history page cut to the budget; its cursor continues before the oldest event kept.
    func cut(_ page: HistoryPage) -> HistoryPage {
        let kept = count(fitting: page.events.map(Self.size))
        guard kept < page.events.count else { return page }
        var cut = page
        cut.events = Array(page.events.prefix(kept))
        cut.nextBefore = cut.events.last?.revision
        return cut
    }

    /// The batch cut to the budget; it runs through the last event kept.
    func cut(_ batch: EventBatch) -> EventBatch {
        let kept = count(fitting: batch.events.map(Self.size))
        guard kept < batch.events.count else { return batch }
        var cut = batch
        cut.events = Array(batch.events.prefix(kept))
        cut.through = cut.events[kept - 1].revision
        cut.hasMore = true
        return cut
    }

    static func size(_ item: Item) -> Int { item.key.path.utf8.count + item.value.count }

    static func size(_ event: Event) -> Int {
        event.key.path.utf8.count + (event.item?.value.count ?? 0) + (event.prevItem?.value.count ?? 0)
    }
}

extension ListPage {
    /// This page cut to `budget`.
    func cut(to budget: PageBudget) -> ListPage { budget.cut(self) }
}

extension HistoryPage {
    /// This page cut to `budget`.
    func cut(to budget: PageBudget) -> HistoryPage { budget.cut(self) }
}

extension EventBatch {
    /// This batch cut to `budget`.
    func cut(to budget: PageBudget) -> EventBatch { budget.cut(self) }
}
