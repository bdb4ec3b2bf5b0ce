/// A page of events being read for a watcher, bounded by count and bytes, that never
/// splits a revision.
///
/// A transaction's changes share one revision; a reader resumes after the last revision
/// a page accounted for, so a page that stopped halfway through a revision would lose
/// the rest of it. Events at the revision of the last one taken are therefore always
/// taken, even past the limit or the budget (a transaction changes at most
/// ``Limits/maxTransactionChanges`` keys).
///
/// ```swift
/// var page = EventPage(limit: limit, maxBytes: maxBytes)
/// for event in rows where scope.matches(event.key) {
///     guard page.offer(event) else { break } // the page is full
/// }
/// let through = page.isFull ? page.events[page.events.count - 1].revision : latest
/// ```
public struct EventPage: Sendable {
    /// The events taken, oldest first.
    public private(set) var events: [Event] = []
    /// Whether an event was refused: more may follow the page.
    public private(set) var isFull = false
    private let limit: Int
    private var budget: PageBudget

    /// An empty page of at most `limit` events and `maxBytes` (see ``PageBudget``).
    public init(limit: Int, maxBytes: Int) {
        self.limit = limit
        budget = PageBudget(bytes: maxBytes)
    }

    /// Takes `event` if it fits, or if it shares the revision of the last event taken.
    /// - Returns: false when the page is full; the event belongs to the next page.
    public mutating func offer(_ event: Event) -> Bool {
        let sameRevision = events.last?.revision == event.revision
        let fits = events.count < limit && budget.take(PageBudget.size(event))
        guard fits || sameRevision else {
            isFull = true
            return false
        }
        events.append(event)
        return true
    }

    /// The last revision the page accounts for: its last event's when it is full, else
    /// `latest` (the config's revision when it was read), and never before `from - 1`.
    public func through(latest: Revision, from: Revision) -> Revision {
        isFull ? events[events.count - 1].revision : Swift.max(latest, from.previous)
    }

    /// The page as a batch.
    public func batch(latest: Revision, from: Revision) -> EventBatch {
        EventBatch(events: events, through: through(latest: latest, from: from), hasMore: isFull)
    }
}
