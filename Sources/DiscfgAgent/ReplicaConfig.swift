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
