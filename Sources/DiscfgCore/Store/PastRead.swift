import Foundation

/// Answers "what was at this key at revision R?" from what any store can look up:
/// the live item, and the first later event on the key (whose `prevItem` is the answer).
public enum PastRead {
    /// Resolves a key's item at `revision`.
    /// - Parameters:
    ///   - configRevision: the config's current revision.
    ///   - compacted: history at or below this revision is gone.
    ///   - current: the stored item, expired or not.
    ///   - now: for hiding an expired item when `revision` is the current one.
    ///   - firstEventAfter: the oldest retained event on the key with a revision above the argument.
    public static func resolve(
        key: Key, at revision: Revision, configRevision: Revision, compacted: Revision,
        current: Item?, now: Date, firstEventAfter: (Revision) throws -> Event?
    ) throws -> Item? {
        guard revision <= configRevision else {
            throw DiscfgError.futureRevision(revision, current: configRevision)
        }
        if let current, current.modRevision <= revision {
            // Every change sweeps due keys first, so an item that is expired but not yet
            // swept was alive at every revision up to the current one except "now".
            return revision == configRevision && current.isExpired(at: now) ? nil : current
        }
        guard revision >= compacted else {
            throw DiscfgError.compacted(revision, through: compacted)
        }
        return try firstEventAfter(revision)?.prevItem
    }
}
