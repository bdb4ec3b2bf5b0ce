import DiscfgCore
import Foundation

/// One config as a read-only copy holds it: its items at one revision, exactly as the
/// source numbered them, and a bounded ring of the latest events so watchers resume.
struct ReplicaConfig: Sendable {
    /// The items and the revision they are at.
    var snapshot: PublishedSnapshot
    /// The latest events, oldest first: every event after ``floor`` up to the revision.
    var ring: [Event] = []
    /// Events at or below this revision are not held: a watch from there is `compacted`.
    var floor: Revision
    /// The most events the ring keeps.
    let capacity: Int

    /// A copy starting from a whole snapshot, holding no events.
    init(_ snapshot: PublishedSnapshot, capacity: Int) {
        self.snapshot = snapshot
        floor = snapshot.revision
        self.capacity = capacity
    }

    /// Takes the source's events after the held revision, in order; older ones are skipped.
    /// - Returns: whether anything changed.
    mutating func apply(_ events: [Event]) -> Bool {
        var changed = false
        // A transaction's events share one revision: compare with the revision held before.
        let held = snapshot.revision
        for event in events where event.revision > held {
            snapshot.apply(event)
            ring.append(event)
            changed = true
        }
        trim()
        return changed
    }

    /// Moves the revision without events (changes outside the copied keys).
    mutating func advance(to revision: Revision) {
        if revision > snapshot.revision { snapshot.revision = revision }
    }

    /// Moves to a whole later snapshot, recording what differs as events: a put for each
    /// item added or changed (at its own revision), a delete for each key gone (at the
    /// snapshot's revision, as the source does not tell when), in revision order.
    /// - Returns: false, changing nothing, when the difference cannot be told as events
    ///   after the revision held: the snapshot is not later, or an item differs at a
    ///   revision already held (the config was recreated).
    mutating func reload(_ newer: PublishedSnapshot, at now: Date) -> Bool {
        let held = snapshot.revision
        guard newer.revision > held else { return false }
        var events: [Event] = []
        var old = Dictionary(uniqueKeysWithValues: snapshot.items.map { ($0.key, $0) })
        for item in newer.items {
            let previous = old.removeValue(forKey: item.key)
            if previous == item { continue }
            guard item.modRevision > held else { return false }
            events.append(Event(kind: .put, revision: item.modRevision, key: item.key, at: item.modifiedAt, item: item, prevItem: previous))
        }
        for (key, previous) in old {
            events.append(Event(kind: .delete, revision: newer.revision, key: key, at: now, item: nil, prevItem: previous))
        }
        events.sort { ($0.revision, $0.key) < ($1.revision, $1.key) }
        snapshot = newer
        ring += events
        trim()
        return true
    }

    /// Drops the oldest revisions past the capacity, whole revisions at a time.
    private mutating func trim() {
        guard ring.count > capacity else { return }
        var drop = ring.count - capacity
        let lastDropped = ring[drop - 1].revision
        while drop < ring.count, ring[drop].revision == lastDropped { drop += 1 }
        ring.removeFirst(drop)
        floor = lastDropped
    }

    /// What a store tells of the config.
    func info() -> ConfigInfo {
        let times = snapshot.items.map(\.modifiedAt)
        let earliest = times.min() ?? Date(milliseconds: 0)
        let latest = max(times.max() ?? earliest, ring.last?.at ?? earliest)
        return ConfigInfo(
            name: snapshot.config, revision: snapshot.revision, compactedRevision: floor,
            createdAt: earliest, modifiedAt: latest, settings: ConfigSettings(), keyCount: snapshot.items.count,
            byteCount: snapshot.items.reduce(0) { $0 + PageBudget.size($1) })
    }
}
