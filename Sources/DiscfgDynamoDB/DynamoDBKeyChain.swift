import DiscfgCore

/// Where a history event is: its revision and its position among that revision's events.
/// Stored as one number, revision × 10⁴ + position (a position has at most
/// ``DynamoDBLayout/positionDigits`` digits), which DynamoDB keeps in a few bytes.
struct EventPlace: Hashable, Comparable, Sendable {
    let revision: Revision
    let position: Int

    /// The event's sort key in the history partition.
    var sortKey: String { DynamoDBLayout.eventSK(revision, position: position) }

    var attribute: AttributeValue {
        let digits = String(position)
        return .n(String(revision.rawValue) + String(repeating: "0", count: DynamoDBLayout.positionDigits - digits.count) + digits)
    }

    init(revision: Revision, position: Int) {
        self.revision = revision
        self.position = position
    }

    init?(_ value: AttributeValue?) {
        guard case .n(let text)? = value, text.count > DynamoDBLayout.positionDigits,
              let revision = UInt64(text.dropLast(DynamoDBLayout.positionDigits)), let position = Int(text.suffix(DynamoDBLayout.positionDigits))
        else { return nil }
        self.init(revision: Revision(revision), position: position)
    }

    static func < (lhs: EventPlace, rhs: EventPlace) -> Bool {
        (lhs.revision, lhs.position) < (rhs.revision, rhs.position)
    }
}

/// A key's events, linked newest to oldest through their history items, the layout of
/// ``KeyChainRule`` on DynamoDB.
///
/// Each event holds its number in the chain (`seq`), where the key's previous events are
/// (`back`, up to ``backLength``, newest first: a page of history is a few
/// `BatchGetItem`s) and its jump (`jump`). The key item, or the key's tombstone once it is
/// deleted, holds the same of the newest event, its place (`mr` and `mp`) and the chain of
/// jumps behind it (`spine`), so a change links its event from what it read anyway,
/// with no read of history. A change thus writes only items it writes anyway, where an
/// index of history by key cost each change an index write more.
///
/// Retention and compaction delete events; a link to a deleted event ends the walk
/// there, which is right for every read still answered (at or after the compacted
/// revision, so every event a walk needs is newer than any deleted one).
struct DynamoDBKeyChain: Sendable, Hashable {
    /// How many previous events an event names.
    static let backLength = 8

    /// The newest event's place.
    var place: EventPlace
    var seq: Int64
    /// Its previous events, newest first.
    var back: [EventPlace]
    /// Its jump, the jump's jump and so on.
    var spine: [EventPlace]

    /// The chain once an event at `place` is added after this one (nil: the key's first).
    static func adding(_ place: EventPlace, after parent: DynamoDBKeyChain?) -> DynamoDBKeyChain {
        guard let parent else { return DynamoDBKeyChain(place: place, seq: 1, back: [], spine: []) }
        let back = Array(([parent.place] + parent.back).prefix(backLength))
        let parentJumpSeq = KeyChainRule.jumpSeq(of: parent.seq)
        if parent.spine.count >= 2, KeyChainRule.jumpsPastParentJump(parentSeq: parent.seq, parentJumpSeq: parentJumpSeq) {
            return DynamoDBKeyChain(place: place, seq: parent.seq + 1, back: back, spine: Array(parent.spine.dropFirst()))
        }
        return DynamoDBKeyChain(place: place, seq: parent.seq + 1, back: back, spine: [parent.place] + parent.spine)
    }

    /// The links the newest event's history item carries.
    var eventLinks: Attributes {
        var attributes: Attributes = [Attribute.chainSeq.rawValue: .number(seq)]
        if !back.isEmpty { attributes[.chainBack] = .l(back.map(\.attribute)) }
        if let jump = spine.first { attributes[.chainJump] = jump.attribute }
        return attributes
    }

    /// What a key item or tombstone carries: the newest event's position, links and spine.
    var headAttributes: Attributes {
        var attributes = eventLinks
        attributes[.chainJump] = nil
        if place.position > 0 { attributes[.headPosition] = .number(UInt64(place.position)) }
        if !spine.isEmpty { attributes[.chainSpine] = .l(spine.map(\.attribute)) }
        return attributes
    }

    /// The chain a key item or tombstone records; nil for one written before chains.
    init?(head attributes: Attributes) {
        guard let seq = attributes[.chainSeq]?.int64, let revision = attributes[.modRevision]?.uint64 else { return nil }
        self.seq = seq
        place = EventPlace(revision: Revision(revision), position: attributes[.headPosition]?.int64.map(Int.init) ?? 0)
        back = Self.places(attributes[.chainBack])
        spine = Self.places(attributes[.chainSpine])
    }

    init(place: EventPlace, seq: Int64, back: [EventPlace], spine: [EventPlace]) {
        self.place = place
        self.seq = seq
        self.back = back
        self.spine = spine
    }

    static func places(_ value: AttributeValue?) -> [EventPlace] {
        guard case .l(let values)? = value else { return [] }
        return values.compactMap(EventPlace.init)
    }
}

/// An event's links as its history item stores them; nil links mark an event written
/// before chains.
struct EventLinks: Sendable {
    let seq: Int64
    /// The key's previous events, newest first.
    let back: [EventPlace]
    let jump: EventPlace?

    init?(_ attributes: Attributes) {
        guard let seq = attributes[.chainSeq]?.int64 else { return nil }
        self.seq = seq
        back = DynamoDBKeyChain.places(attributes[.chainBack])
        jump = EventPlace(attributes[.chainJump])
    }
}
