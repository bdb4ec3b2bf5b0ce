/// Where a reader of a config's events stands, exactly, even inside a transaction (whose
/// events share one revision): the first revision it still wants, and how many events of
/// that revision it already has. Events come in a fixed order, so a reader that resumes
/// from ``revision`` skips the first ``delivered`` events of it and misses or repeats
/// nothing.
///
/// Server-Sent Events name each event by its ``eventID``: the revision for the first
/// event of a revision (as before transactions), `R.P` for the event at position P of it.
///
/// ```swift
/// var point = ResumePoint(from: start)
/// var replay = point.replay()
/// for event in events where replay.admit(event) { deliver(event) }
/// point = replay.point // reconnect from here
/// ```
public struct ResumePoint: Hashable, Sendable {
    /// The first revision still wanted.
    public private(set) var revision: Revision
    /// How many events of ``revision`` were already delivered.
    public private(set) var delivered: Int

    /// A reader that wants everything from `revision` on.
    public init(from revision: Revision, delivered: Int = 0) {
        self.revision = revision
        self.delivered = delivered
    }

    /// The point right after the event a Server-Sent Events id names: `R` (the first, or
    /// only, event of revision R) or `R.P` (its event at position P); nil for anything else.
    public init?(eventID text: String) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        // 19 digits always fit 64 bits; past the largest revision means after it, when
        // nothing more comes (as ``Revision/next`` has it).
        guard let first = parts.first, !first.isEmpty, first.utf8.count <= 19, first.allSatisfy(\.isASCIIDigit),
              let parsed = UInt64(first)
        else { return nil }
        let value = min(parsed, Revision.max.rawValue)
        var position = 0
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].utf8.count <= 4, parts[1].allSatisfy(\.isASCIIDigit), let parsed = Int(parts[1]) else { return nil }
            position = parsed
        }
        self.init(from: Revision(value), delivered: position + 1)
    }

    /// The id of the last event delivered, or nil before the first.
    public var eventID: String? {
        guard delivered > 0 else { return nil }
        return delivered == 1 ? revision.description : "\(revision).\(delivered - 1)"
    }

    /// A filter for one pass over the events from ``revision`` (a connection, a page).
    public func replay() -> Replay { Replay(point: self) }

    /// Admits the events a reader has not had yet, moving its point past each.
    public struct Replay: Sendable {
        /// The point after the last event admitted.
        public private(set) var point: ResumePoint
        private var seen = 0

        init(point: ResumePoint) { self.point = point }

        /// Whether `event` is new to the reader; if so, the point moves past it.
        public mutating func admit(_ event: Event) -> Bool {
            if event.revision < point.revision { return false }
            if event.revision == point.revision {
                seen += 1
                if seen <= point.delivered { return false }
                point.delivered += 1
                return true
            }
            point = ResumePoint(from: event.revision, delivered: 1)
            seen = 1
            return true
        }

        /// Every revision through `revision` is known complete (a page accounted for it).
        public mutating func complete(through revision: Revision) {
            guard revision >= point.revision else { return }
            point = ResumePoint(from: revision.next)
            seen = 0
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
