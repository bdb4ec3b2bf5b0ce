import DiscfgCore
import Foundation

/// A change too large for one `TransactWriteItems` (100 actions, 4 MB): an import of
/// thousands of keys, a prefix delete, a rollback. It is still one change — one revision,
/// all or nothing for every reader — committed in three steps:
///
/// 1. **Stage.** The meta item records the change (`staging`, with a lease), which holds
///    every other change back. Transactions of up to 100 actions then write the change's
///    history items (at revisions past the config's, so no reader sees them) and mark
///    each key item it changes with the change's id, the place of the key's event and the
///    chain head the key takes (``PendingMark``); a key without an item gets a placeholder
///    item holding only the mark. Each of these transactions checks that the meta item
///    still records the change as staging.
/// 2. **Commit.** One write of the meta item: the revision moves to the change's and the
///    record says `committed`. This is the moment the change happens for every reader.
/// 3. **Fold.** Each marked key item takes its final state from its event (or is deleted,
///    its tombstone written), conditioned on still carrying the mark; then the record goes.
///
/// A reader that meets a marked key item reads the meta item: while the change is
/// committed the key's state is its event's (``KeyWrite/folded(_:_:final:head:place:)``,
/// the rule the fold writes by), while it is staged or being undone the key is as it was.
/// A writer that meets the record folds a committed change itself, waits for a staging one
/// whose lease holds, and undoes one whose lease ran out (its writer stopped): the record
/// is set to `undoing`, which every later staging transaction of that writer fails on, the
/// marks and the history items past the config's revision are removed, then the record.
struct BulkChange: Sendable, Equatable {
    enum State: String, Sendable {
        case staging, committed, undoing
    }

    let id: String
    /// The change's first revision.
    let revision: Revision
    var state: State
    /// Until when the writer holds the config while staging.
    var until: Date

    init(id: String, revision: Revision, state: State, until: Date) {
        self.id = id
        self.revision = revision
        self.state = state
        self.until = until
    }

    /// The record a meta item carries; nil when it carries none.
    init?(_ attributes: Attributes) {
        guard let id = attributes[.bulkID]?.string, let revision = attributes[.bulkRevision]?.uint64,
              let state = attributes[.bulkState]?.string.flatMap(State.init(rawValue:)),
              let until = attributes[.bulkUntil]?.int64
        else { return nil }
        self.init(id: id, revision: Revision(revision), state: state, until: Date(milliseconds: until))
    }

    /// The meta item's attributes that record it.
    var attributes: Attributes {
        var attributes: Attributes = [:]
        attributes[.bulkID] = .s(id)
        attributes[.bulkRevision] = .number(revision.rawValue)
        attributes[.bulkState] = .s(state.rawValue)
        attributes[.bulkUntil] = .number(until.milliseconds)
        return attributes
    }

    /// The most events one change holds on DynamoDB: its events share its revision, and an
    /// event's place in the history partition gives its position among them
    /// ``DynamoDBLayout/positionDigits`` (4) digits. Larger changes are refused whole.
    static let maxEvents = 10_000

    /// How long a writer holds the config while it stages; it renews the hold when half is
    /// gone, so only a writer that stopped lets it run out.
    static let lease: TimeInterval = 30

    /// The condition a staging transaction checks on the meta item.
    func stillStaging() -> Expression {
        var condition = Expression("\(.bulkID) = :bulk AND \(.bulkState) = :staging")
        condition.values = [":bulk": .s(id), ":staging": .s(State.staging.rawValue)]
        return condition
    }

    /// The condition of writes to an item this change marked: the mark is still there.
    func marked() -> Expression {
        var condition = Expression("\(.pending) = :bulk")
        condition.values = [":bulk": .s(id)]
        return condition
    }

    /// The action that marks `write`'s key item: a placeholder holding the mark where the
    /// key has no item, else the mark added, conditioned on the key's state as read (a
    /// mark left by a change that ended is written over).
    func stage(_ write: KeyWrite) -> WriteAction {
        let itemKey = DynamoDBLayout.itemKey(write.config, write.key)
        let mark = PendingMark(id: id, place: write.place, head: write.head)
        if !write.original {
            return .put(itemKey.merging(mark.attributes) { $1 }, condition: .keyAbsent)
        }
        var update = Expression("SET \(.pending) = :pend, \(.pendingPlace) = :pat, \(.pendingHead) = :phd")
        update.values = [":pend": .s(id), ":pat": mark.place.attribute, ":phd": .m(mark.head)]
        return .update(key: itemKey, update: update, condition: write.condition)
    }

    /// The actions that fold `write` into its key item and tombstone, each conditioned so
    /// that folding twice, or after a later change, writes nothing.
    func fold(_ write: KeyWrite) -> [WriteAction] {
        let (item, tombstone) = write.folded
        if let item { return [.put(item, condition: marked())] }
        var actions: [WriteAction] = [.delete(key: DynamoDBLayout.itemKey(write.config, write.key), condition: marked())]
        if let tombstone {
            var notNewer = Expression("attribute_not_exists(\(.modRevision)) OR \(.modRevision) <= :mr")
            notNewer.values = [":mr": .number(write.place.revision.rawValue)]
            actions.append(.put(tombstone, condition: notNewer))
        }
        return actions
    }

    /// The action that takes this change's mark off a key item: a placeholder goes.
    func unstage(_ item: Attributes, config: ConfigName) -> WriteAction? {
        guard let path = item[.sk]?.string, item[.pending]?.string == id else { return nil }
        let itemKey = DynamoDBLayout.itemKey(config, Key(stored: path))
        guard ItemCodec.item(item) != nil else { return .delete(key: itemKey, condition: marked()) }
        return .update(key: itemKey, update: Expression("REMOVE \(.pending), \(.pendingPlace), \(.pendingHead)"), condition: marked())
    }
}

/// What a key item staged by a ``BulkChange`` carries: the change's id, where the key's
/// event is, and the chain head the key takes once the change is folded.
struct PendingMark: Sendable {
    let id: String
    let place: EventPlace
    let head: Attributes

    init(id: String, place: EventPlace, head: Attributes) {
        self.id = id
        self.place = place
        self.head = head
    }

    /// The mark a key item carries; nil when it carries none.
    init?(_ attributes: Attributes) {
        guard let id = attributes[.pending]?.string, let place = EventPlace(attributes[.pendingPlace]) else { return nil }
        self.init(id: id, place: place, head: attributes[.pendingHead].flatMap { if case .m(let head) = $0 { head } else { nil } } ?? [:])
    }

    var attributes: Attributes {
        var attributes: Attributes = [:]
        attributes[.pending] = .s(id)
        attributes[.pendingPlace] = place.attribute
        attributes[.pendingHead] = .m(head)
        return attributes
    }

    /// The key's write once the change is folded, from its event at ``place``.
    func write(_ config: ConfigName, _ key: Key, event: Event) -> KeyWrite {
        KeyWrite(config: config, key: key, final: event.item, head: head, place: place, original: true, condition: .itemExists)
    }
}
