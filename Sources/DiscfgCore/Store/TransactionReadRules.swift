import Foundation

/// The keys of a config a transaction's ranges reach: a store skips every other key when
/// it compares, reads or deletes over a range (``Comparison/Subject/range``,
/// ``Comparison/Subject/prefix``, ``TransactionOperation/getRange(_:)``,
/// ``TransactionOperation/deleteRange(_:)`` and their prefix forms). Keys named one by
/// one are the caller's to choose and are not filtered.
///
/// A face that owns only some keys of a config (the etcd API owns the keys its encoding
/// makes) sets one, so a compare or delete over a range never sees or touches the rest:
/// a binary search of `<`/`>` compares cannot recover another writer's value.
///
/// Two filters are equal when their names are: the name says what the filter admits.
public struct KeyFilter: Hashable, Sendable, CustomStringConvertible {
    /// What the filter admits, in a few words (`etcd-encoded keys`).
    public let name: String
    /// Whether a key is reached.
    public let admits: @Sendable (Key) -> Bool

    /// A filter named `name` that admits the keys `admits` returns true for.
    public init(_ name: String, admits: @escaping @Sendable (Key) -> Bool) {
        self.name = name
        self.admits = admits
    }

    /// The keys an etcd key makes (``EtcdKeyPath``): the etcd API's ranges reach only
    /// these, so keys of the config written by other means are neither compared, read
    /// nor deleted through it.
    public static let etcdKeys = KeyFilter("etcd-encoded keys") { EtcdKeyPath.isKeyPath($0.path) }

    public static func == (lhs: KeyFilter, rhs: KeyFilter) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    public var description: String { name }
}

/// How many bytes the reads of one transaction may return together, counted while the
/// store reads (so a store stops keeping items once the budget is spent, rather than
/// reading every range whole and cutting afterwards).
///
/// An item costs its key path, its value (unless ``countsValues`` is false) and
/// ``bytesPerItem`` for what the caller's encoding adds around it. What happens past the
/// budget is ``pastBudget``.
public struct ReadBudget: Hashable, Sendable {
    /// What a read that would pass the budget does.
    public enum Past: Hashable, Sendable {
        /// The read stops keeping items: its response holds those that fit, in key order,
        /// and ``TransactionResult/cutReads`` holds how many live items it found in all.
        case cut
        /// The transaction is refused with `tooLarge` and changes nothing.
        case refuse
    }

    /// The most bytes the reads return together.
    public var bytes: Int
    /// Bytes counted for each item besides its key path and value.
    public var bytesPerItem: Int
    /// Whether values count (false when the caller returns keys only).
    public var countsValues: Bool
    /// What a read past the budget does.
    public var pastBudget: Past

    /// A budget of `bytes`.
    public init(bytes: Int, bytesPerItem: Int = 0, countsValues: Bool = true, pastBudget: Past) {
        self.bytes = bytes
        self.bytesPerItem = bytesPerItem
        self.countsValues = countsValues
        self.pastBudget = pastBudget
    }

    /// What `item` costs: what a list page counts for it (``PageBudget/size(_:)-(Item)``),
    /// less its value when values do not count, plus ``bytesPerItem``.
    public func size(_ item: Item) -> Int {
        (countsValues ? PageBudget.size(item) : item.key.path.utf8.count) + bytesPerItem
    }

    /// The error for a transaction whose reads pass the budget under ``Past/refuse``.
    public var refusal: DiscfgError {
        DiscfgError(
            .tooLarge,
            "the transaction's reads return more than \(bytes) bytes, the most one answer holds; nothing was changed: read fewer keys per transaction (narrower ranges, or on the etcd API a limit or keys only), or read them with list pages",
            field: "transaction"
        )
    }
}

/// The state of a transaction's reads against its ``ReadBudget``.
struct ReadBudgetState {
    let budget: ReadBudget?
    private var used = 0
    /// Live items found in all by each read the budget cut, by response index.
    private(set) var cut: [Int: Int] = [:]

    init(_ budget: ReadBudget?) {
        self.budget = budget
    }

    /// Offers a live item, in key order, to the read answering response `index`: kept
    /// while the budget lasts; past it counted (``ReadBudget/Past/cut``) or refused.
    mutating func offer(_ item: Item, at index: Int, into kept: inout [Item]) throws {
        guard let budget else {
            kept.append(item)
            return
        }
        if let found = cut[index] {
            cut[index] = found + 1
            return
        }
        let size = budget.size(item)
        guard used + size <= budget.bytes else {
            if budget.pastBudget == .refuse { throw budget.refusal }
            cut[index] = kept.count + 1
            return
        }
        used += size
        kept.append(item)
    }
}
