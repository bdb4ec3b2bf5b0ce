/// How a store's writes reach the disk: each group commit holds every change that arrived
/// while the one before it ran, and is durable once its sync of the log returned.
public struct GroupCommitStatistics: Sendable, Equatable {
    /// Upper bounds of the batch-size buckets, in changes per commit.
    public static let bounds: [Int] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

    /// Commits made, each one sync.
    public var commits: UInt64 = 0
    /// Changes committed, over all commits.
    public var changes: UInt64 = 0
    /// Syncs of the log: one for each commit, made before the commit is visible, and one
    /// for the header of a log that starts over.
    public var syncs: UInt64 = 0
    /// Commits per batch-size bucket: the first whose bound holds the commit's change
    /// count, the last for bigger ones.
    public var batches = [UInt64](repeating: 0, count: bounds.count + 1)

    public init() {}

    /// Counts a commit of `changes` changes.
    public mutating func record(changes count: Int) {
        commits += 1
        changes += UInt64(count)
        batches[Self.bounds.firstIndex { count <= $0 } ?? Self.bounds.count] += 1
    }
}

/// A store that commits its writes in groups and reports how they went.
public protocol GroupCommitReporting: Sendable {
    /// The commits since the store was opened.
    var groupCommits: GroupCommitStatistics { get }
}
