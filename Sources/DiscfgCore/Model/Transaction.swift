import Foundation

/// A multi-key transaction in etcd's shape: if every comparison holds, the `success`
/// operations run, otherwise the `failure` operations, all atomically.
///
/// One transaction is one revision: every change it makes carries the same, new
/// revision, and watchers receive its events together. A transaction that changes no key
/// (only reads, or deletes of absent keys) leaves the revision where it was. Later
/// operations see the changes of earlier ones (a `get` after a `put` reads the new
/// value); a key may be written at most once per branch.
///
/// A branch may hold a transaction (``TransactionOperation/nested(_:)``), as etcd's
/// `request_txn`: before any operation runs, the comparisons of the whole tree along the
/// path taken are evaluated against the config as the transaction began, and then the
/// operations of that path run in order, all in one revision. See ``validate()`` for
/// the bounds of a tree.
///
/// ```swift
/// let txn = Transaction(
///     compares: [Comparison(.key(try Key("/lock")), .equal, .version(0))],
///     success: [.put(try Key("/lock"), Data("me".utf8)), .put(try Key("/owner"), Data("me".utf8))],
///     failure: [.get(try Key("/lock"))]
/// )
/// let result = try await store.transact(txn, in: config)
/// print(result.succeeded, result.revision)
/// ```
public struct Transaction: Hashable, Sendable {
    /// The guards; all must hold for `success` to run.
    public var compares: [Comparison]
    /// What runs when every comparison holds.
    public var success: [TransactionOperation]
    /// What runs otherwise.
    public var failure: [TransactionOperation]
    /// The only keys its ranges reach (nil: every key); see ``KeyFilter``.
    public var keyFilter: KeyFilter?
    /// How many bytes its reads return together (nil: no budget); see ``ReadBudget``.
    public var readBudget: ReadBudget?
    /// Who makes it and why, when the caller names them here; nil for
    /// ``Attribution/current``. A face that knows its caller on every call (the etcd
    /// API) names it here and spares a task-local push per call.
    public var attribution: Attribution?

    /// Creates a transaction. One nested in another (``TransactionOperation/nested(_:)``)
    /// uses only its comparisons and branches: the outermost transaction's
    /// ``keyFilter``, ``readBudget`` and ``attribution`` hold for the whole tree.
    public init(compares: [Comparison] = [], success: [TransactionOperation] = [], failure: [TransactionOperation] = []) {
        self.compares = compares
        self.success = success
        self.failure = failure
    }

    /// Whether running this transaction could change a key (for authorization: a
    /// transaction that only reads needs only read access).
    public var writes: Bool { (success + failure).contains { $0.writes } }
}

/// One guard of a ``Transaction``: a target of a key (or of every key under a prefix)
/// compared with a value.
///
/// As in etcd, an absent key has version, createRevision and modRevision 0 and no value,
/// so `version = 0` holds for it and every `value` comparison fails. On a prefix, the
/// comparison holds when it holds for every live key under it, or, with no key there, for
/// an absent key; `exists` holds when at least one key is there.
public struct Comparison: Hashable, Sendable {
    /// What is compared.
    public enum Subject: Hashable, Sendable {
        /// One key.
        case key(Key)
        /// Every key under a prefix.
        case prefix(KeyPrefix)
        /// Every key in a range of paths (etcd's `key`/`range_end`).
        case range(KeyRange)
    }

    /// How the key's target relates to the given one.
    public enum Relation: String, Hashable, Sendable, CaseIterable {
        case equal = "="
        case notEqual = "!="
        case less = "<"
        case greater = ">"
    }

    /// The attribute compared, with the operand.
    public enum Target: Hashable, Sendable {
        /// The value's bytes (compared byte by byte for `<` and `>`).
        case value(Data)
        /// The key's version; 0 when it does not exist.
        case version(UInt64)
        /// The revision that created the key; 0 when it does not exist.
        case createRevision(Revision)
        /// The revision that last changed the key; 0 when it does not exist.
        case modRevision(Revision)
        /// Whether the key (or any key under the prefix) exists; only `=` and `!=`.
        case exists(Bool)

        /// The target's name in JSON and on the command line.
        public var name: String {
            switch self {
            case .value: "value"
            case .version: "version"
            case .createRevision: "createRevision"
            case .modRevision: "modRevision"
            case .exists: "exists"
            }
        }
    }

    /// The key or prefix.
    public var subject: Subject
    /// The relation that must hold.
    public var relation: Relation
    /// The target and its operand.
    public var target: Target

    /// Creates a comparison.
    public init(_ subject: Subject, _ relation: Relation, _ target: Target) {
        self.subject = subject
        self.relation = relation
        self.target = target
    }

    /// Checks the operand: values within limits, `exists` only with `=` or `!=`.
    public func validate() throws {
        switch target {
        case .value(let value): try Limits.validateValue(value)
        case .exists:
            guard relation == .equal || relation == .notEqual else {
                throw DiscfgError.invalid("compare", "an exists comparison takes = or !=, not \(relation.rawValue)")
            }
        case .version, .createRevision, .modRevision: break
        }
        if case .modRevision(let revision) = target, revision > .max { throw DiscfgError.invalid("compare", "modRevision \(revision) is larger than \(Revision.max)") }
        if case .createRevision(let revision) = target, revision > .max { throw DiscfgError.invalid("compare", "createRevision \(revision) is larger than \(Revision.max)") }
    }

    /// Whether the comparison holds for the live items of its subject (at most one for a
    /// key; every live key for a prefix).
    public func holds(for items: [Item]) -> Bool {
        if case .exists(let expected) = target {
            return (!items.isEmpty == expected) == (relation == .equal)
        }
        guard !items.isEmpty else { return holds(for: nil) }
        return items.allSatisfy { holds(for: $0) }
    }

    private func holds(for item: Item?) -> Bool {
        let order: ComparisonResult
        switch target {
        case .value(let expected):
            guard let item else { return false }
            order = Self.order(item.value, expected)
        case .version(let expected): order = Self.order(item?.version ?? 0, expected)
        case .createRevision(let expected): order = Self.order(item?.createRevision.rawValue ?? 0, expected.rawValue)
        case .modRevision(let expected): order = Self.order(item?.modRevision.rawValue ?? 0, expected.rawValue)
        case .exists: return false
        }
        switch relation {
        case .equal: return order == .orderedSame
        case .notEqual: return order != .orderedSame
        case .less: return order == .orderedAscending
        case .greater: return order == .orderedDescending
        }
    }

    private static func order<T: Comparable>(_ lhs: T, _ rhs: T) -> ComparisonResult {
        lhs < rhs ? .orderedAscending : lhs == rhs ? .orderedSame : .orderedDescending
    }

    private static func order(_ lhs: Data, _ rhs: Data) -> ComparisonResult {
        lhs == rhs ? .orderedSame : lhs.lexicographicallyPrecedes(rhs) ? .orderedAscending : .orderedDescending
    }
}

/// One operation of a ``Transaction`` branch.
public enum TransactionOperation: Hashable, Sendable {
    /// Sets a key, with an optional TTL in seconds and content type.
    case put(Key, Data, ttlSeconds: Int64? = nil, contentType: String? = nil)
    /// Patches a key's JSON value (see ``ValuePatch``), keeping its content type and TTL;
    /// the key must exist, and a patch that does not apply refuses the whole transaction.
    case patch(Key, ValuePatch)
    /// Deletes a key; an absent key is no error and changes nothing.
    case delete(Key)
    /// Deletes every key under a prefix.
    case deletePrefix(KeyPrefix)
    /// Reads a key.
    case get(Key)
    /// Reads every key under a prefix, in key order.
    case getPrefix(KeyPrefix)
    /// Deletes every key in a range of paths.
    case deleteRange(KeyRange)
    /// Reads every key in a range of paths, in key order.
    case getRange(KeyRange)
    /// Runs a transaction inside this one (etcd's `request_txn`): its comparisons were
    /// evaluated with the outer ones, against the config as the outer transaction began;
    /// its chosen branch runs here, in order, within the outer transaction's revision.
    case nested(Transaction)

    /// Whether the operation may change a key.
    public var writes: Bool {
        switch self {
        case .put, .patch, .delete, .deletePrefix, .deleteRange: true
        case .get, .getPrefix, .getRange: false
        case .nested(let transaction): transaction.writes
        }
    }

    /// The key or prefix the operation names, as a path.
    public var path: String {
        switch self {
        case .put(let key, _, _, _), .patch(let key, _), .delete(let key), .get(let key): key.path
        case .deletePrefix(let prefix), .getPrefix(let prefix): prefix.path
        case .deleteRange(let range), .getRange(let range): range.description
        case .nested: "(a nested transaction)"
        }
    }
}

/// What one operation of a transaction did.
public enum TransactionResponse: Hashable, Sendable {
    /// The key's change (its `prevItem` is the item before).
    case put(Event)
    /// The keys a delete or delete-prefix removed, one event each (empty when none existed).
    case delete([Event])
    /// The live items a get or get-prefix read (empty when none exist).
    case get([Item])
    /// What a nested transaction did: whether its comparisons held, and one response per
    /// operation of its branch that ran, in order.
    case nested(succeeded: Bool, responses: [TransactionResponse])
}

/// What a transaction did.
public struct TransactionResult: Hashable, Sendable {
    /// Whether every comparison held (so `success` ran).
    public var succeeded: Bool
    /// The config's revision after the transaction: the transaction's own revision when
    /// it changed a key.
    public var revision: Revision
    /// One response per operation of the branch that ran, in order.
    public var responses: [TransactionResponse]
    /// The transaction's changes, all at ``revision``, in the order they were made.
    public var events: [Event]
    /// The reads ``Transaction/readBudget`` cut (``ReadBudget/Past/cut``): for each, by
    /// its index in ``responses``, how many live items it found in all. A read inside a
    /// nested transaction is indexed by its place among every response of the tree, in
    /// the order they ran (the same as its index when nothing is nested).
    public var cutReads: [Int: Int]

    /// Creates a result.
    public init(succeeded: Bool, revision: Revision, responses: [TransactionResponse], events: [Event], cutReads: [Int: Int] = [:]) {
        self.succeeded = succeeded
        self.revision = revision
        self.responses = responses
        self.events = events
        self.cutReads = cutReads
    }
}

extension Transaction {
    /// The keys a store must read before it applies the transaction (every key a
    /// comparison or operation names) and the ranges it must read whole.
    public var reads: (keys: [Key], ranges: [KeyRange]) {
        var keys: [Key] = []
        var ranges: [KeyRange] = []
        func add(_ transaction: Transaction) {
            for comparison in transaction.compares {
                switch comparison.subject {
                case .key(let key): keys.append(key)
                case .prefix(let prefix): ranges.append(prefix.range)
                case .range(let range): ranges.append(range)
                }
            }
            for operation in transaction.success + transaction.failure {
                switch operation {
                case .put(let key, _, _, _), .delete(let key), .get(let key): keys.append(key)
                case .patch(let key, _): keys += [key, SchemaTarget.key(key).storageKey]
                case .deletePrefix(let prefix), .getPrefix(let prefix): ranges.append(prefix.range)
                case .deleteRange(let range), .getRange(let range): ranges.append(range)
                case .nested(let nested): add(nested)
                }
            }
        }
        add(self)
        // A range inside another is read with it; an empty one not at all.
        let unique = Set(ranges.filter { !$0.isEmpty })
        let outer = unique.filter { range in !unique.contains { $0 != range && $0.covers(range) } }
        return (Array(Set(keys)).sorted(), outer.sorted { $0.lower.utf8.lexicographicallyPrecedes($1.lower.utf8) })
    }
}
