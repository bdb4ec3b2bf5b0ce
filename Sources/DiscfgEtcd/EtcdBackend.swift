import DiscfgCore
import Foundation

/// etcd's key-value semantics over one discfg config: ranges, puts, deletes,
/// transactions and reads at past revisions, in etcd's terms (byte keys, `range_end`),
/// with discfg's store doing the work. The gRPC services are a thin layer over it.
///
/// Every etcd key is a key of ``config`` (``EtcdKeys``); keys of the config that no etcd
/// key makes (written by other means) are invisible here.
public struct EtcdBackend: Sendable {
    /// The store.
    public let store: any ConfigStore
    /// The config holding the etcd keys.
    public let config: ConfigName
    /// The deadline of each call and the log of its failures (set by ``EtcdServer``).
    var calls = EtcdCalls()

    /// A backend over `config` of `store`.
    public init(store: any ConfigStore, config: ConfigName) {
        self.store = store
        self.config = config
        calls.config = config
    }

    /// Creates the config when it does not exist yet, keeping `history` (etcd keeps every
    /// revision until a client compacts; a bounded default keeps the store bounded while
    /// clients watching recent revisions keep working). An existing config keeps its own
    /// settings; returns them, so a caller can say when they differ.
    ///
    /// `quotaBytes` bounds the keys and values a new config holds (etcd's
    /// `--quota-backend-bytes`): past it a change is refused with etcd's NOSPACE
    /// ("etcdserver: mvcc: database space exceeded"); nil for none.
    ///
    /// A config still at revision 0 is moved to revision 1 (``revisionOneKey``), where an
    /// empty etcd starts.
    @discardableResult
    public func prepare(history: HistoryRetention = Self.defaultHistory, quotaBytes: Int? = Self.defaultQuotaBytes) async throws -> ConfigInfo {
        let info: ConfigInfo
        do {
            info = try await store.createConfig(config, settings: ConfigSettings(history: history, quotaBytes: quotaBytes))
        } catch let error as DiscfgError where error.code == .configExists {
            info = try await store.configInfo(config)
        }
        return try await holdRevisionOne(info)
    }

    /// The quota of a new etcd config: 2 GiB of live keys and values, etcd's default
    /// `--quota-backend-bytes` (etcd counts its history too; here the retention bounds it).
    public static let defaultQuotaBytes = 2 << 30

    /// The history a new etcd config keeps: its last 100,000 changes. etcd keeps all of
    /// them until compacted (and its clients compact); a client watching from a
    /// revision older than these is told it was compacted, as etcd tells it.
    public static let defaultHistory = HistoryRetention.last(100_000)

    /// The config's revision now.
    public func currentRevision() async throws -> Revision {
        try await store.configInfo(config).revision
    }

    /// etcd's compaction to `revision`: every revision before it is dropped, `revision`
    /// itself stays readable (discfg's history through `revision - 1`).
    public func compact(_ revision: Int64) async throws -> ConfigInfo {
        let info = try await store.configInfo(config)
        guard revision <= info.revision.storageValue else { throw EtcdError.futureRevision }
        // As etcd: compacting to 0 before any compaction changes nothing.
        if revision == 0, info.compactedRevision == .zero { return info }
        guard revision > 0, Revision(UInt64(revision)).previous > info.compactedRevision else { throw EtcdError.compacted }
        return try await store.compact(config, through: Revision(UInt64(revision)).previous)
    }

    /// What a range read asks for, in etcd's terms.
    public struct RangeQuery: Sendable {
        public var key: [UInt8]
        public var rangeEnd: [UInt8] = []
        /// At most this many keys; 0 for all.
        public var limit: Int64 = 0
        /// Read as of this revision; 0 for now.
        public var revision: Int64 = 0
        public var sortOrder: SortOrder = .none
        public var sortTarget: SortTarget = .key
        public var keysOnly = false
        public var countOnly = false
        public var minModRevision: Int64 = 0
        public var maxModRevision: Int64 = 0
        public var minCreateRevision: Int64 = 0
        public var maxCreateRevision: Int64 = 0

        public enum SortOrder: Sendable { case none, ascend, descend }
        public enum SortTarget: Sendable { case key, version, create, mod, value }

        public init(key: [UInt8], rangeEnd: [UInt8] = []) {
            self.key = key
            self.rangeEnd = rangeEnd
        }
    }

    /// What a range read found.
    public struct RangeResult: Sendable {
        public var items: [Item]
        public var more: Bool
        public var count: Int
        public var revision: Revision
    }

    /// Reads the keys of a range, as of now or of a past revision, within
    /// ``EtcdAnswer/maxBytes``: past it the answer ends at the last key that fits, with
    /// `more` set and `count` the keys of the whole range (etcd's `more` means exactly
    /// that more keys exist past the answer). An answer in an order other than the
    /// keys' cannot be cut that way and is refused (``EtcdError/answerTooLarge``), as is
    /// a read at a past revision over more than the budget.
    public func range(_ query: RangeQuery) async throws -> RangeResult {
        guard !query.key.isEmpty else { throw EtcdError.emptyKey }
        // As etcd: a limit of 0 or less is none, a revision of 0 or less is now.
        let budget = EtcdAnswer.budget(keysOnly: query.keysOnly || query.countOnly, past: .cut)
        var (items, revision, total) = try await liveItems(key: query.key, rangeEnd: query.rangeEnd, budget: budget)
        if query.revision > 0 {
            let wanted = Revision(UInt64(query.revision))
            guard wanted <= revision else { throw EtcdError.futureRevision }
            // etcd keeps the revision it compacted to readable; discfg's compacted
            // revision is the one before it.
            if wanted <= (try await store.configInfo(config)).compactedRevision { throw EtcdError.compacted }
            if wanted < revision {
                if query.rangeEnd.isEmpty {
                    // One key: the store finds its value then among the key's own events.
                    items = try await itemAt(wanted, key: query.key).map { [$0] } ?? []
                    total = nil
                } else {
                    // Later changes undone; when the live read was cut, the answer holds
                    // the keys up to its last, which are all known.
                    let past = try await itemsAt(
                        wanted, from: items, current: revision, range: Self.keyRange(key: query.key, rangeEnd: query.rangeEnd),
                        through: total == nil ? nil : items.last?.key
                    )
                    items = past.items
                    total = total.map { $0 + past.countChange }
                }
            }
        }
        // The past may hold more than the live read kept: the answer's own budget.
        var used = 0
        let fitting = items.prefix { item in
            used += budget.size(item)
            return used <= budget.bytes
        }
        if fitting.count < items.count {
            total = total ?? items.count
            items = Array(fitting)
        }
        if let total {
            // The answer stopped at the budget: what it holds is the range's start in key
            // order, which only an answer in key order can use.
            guard query.sortTarget == .key, query.sortOrder != .descend else { throw EtcdError.answerTooLarge }
            let shaped = Self.shaped(items, query)
            // As etcd's, a count-only answer never says more.
            let more = !query.countOnly && (shaped.more || shaped.items.count < total)
            return RangeResult(items: shaped.items, more: more, count: total, revision: revision)
        }
        let shaped = Self.shaped(items, query)
        return RangeResult(items: shaped.items, more: shaped.more, count: shaped.count, revision: revision)
    }

    /// A range's items as the query asks for them: filtered by revisions, sorted, cut to
    /// the limit, values left out for `keys_only`, items left out for `count_only`.
    /// `count` is how many the range holds, before the filters and the limit, as etcd's
    /// (its revision filters prune the answer, not the count).
    static func shaped(_ items: [Item], _ query: RangeQuery) -> (items: [Item], more: Bool, count: Int) {
        let count = items.count
        var items = items.filter { item in
            (query.minModRevision == 0 || item.modRevision.rawValue >= UInt64(clamping: query.minModRevision))
                && (query.maxModRevision == 0 || item.modRevision.rawValue <= UInt64(clamping: query.maxModRevision))
                && (query.minCreateRevision == 0 || item.createRevision.rawValue >= UInt64(clamping: query.minCreateRevision))
                && (query.maxCreateRevision == 0 || item.createRevision.rawValue <= UInt64(clamping: query.maxCreateRevision))
        }
        items = sorted(items, order: query.sortOrder, target: query.sortTarget)
        var more = false
        // As etcd's, a count-only answer holds no keys, so it never has more of them.
        if query.limit > 0, !query.countOnly, items.count > Int(clamping: query.limit) {
            items = Array(items.prefix(Int(clamping: query.limit)))
            more = true
        }
        if query.countOnly { items = [] }
        if query.keysOnly { items = items.map { var item = $0; item.value = Data(); return item } }
        return (items, more, count)
    }

    /// The live etcd items of a range, the revision they were read at, and, when the
    /// read stopped at `budget`, how many the whole range holds (the items are then the
    /// range's first, in key order).
    func liveItems(key: [UInt8], rangeEnd: [UInt8], budget: ReadBudget) async throws -> ([Item], Revision, total: Int?) {
        let operation: TransactionOperation
        if rangeEnd.isEmpty {
            // One key: a read of the key, then of the revision, is not one view; a
            // transaction that only reads is.
            operation = .get(try EtcdKeys.key(key))
        } else {
            let range = EtcdKeys.range(key: key, rangeEnd: rangeEnd)
            guard !range.isEmpty else { return ([], try await currentRevision(), nil) }
            operation = .getRange(range)
        }
        var transaction = Transaction(success: [operation])
        transaction.keyFilter = EtcdKeys.filter
        transaction.readBudget = budget
        let result = try await store.transact(transaction, in: config)
        guard case .get(let items)? = result.responses.first else { return ([], result.revision, nil) }
        return (items.filter { EtcdKeys.bytes($0.key.path) != nil }, result.revision, result.cutReads[0])
    }

    /// The paths an etcd key and range end cover (one key when the end is empty).
    static func keyRange(key: [UInt8], rangeEnd: [UInt8]) -> KeyRange {
        guard rangeEnd.isEmpty else { return EtcdKeys.range(key: key, rangeEnd: rangeEnd) }
        let path = EtcdKeys.path(key)
        return KeyRange(lower: path, upper: path + "\u{0}")
    }

    /// One key's item as of `revision`.
    func itemAt(_ revision: Revision, key: [UInt8]) async throws -> Item? {
        do {
            return try await store.get(EtcdKeys.key(key), in: config, atRevision: revision)
        } catch let error as DiscfgError where error.code == .compacted {
            throw EtcdError.compacted
        }
    }

    /// The items of `range` as of `revision`: the live ones read at `current`
    /// (`items`), with every later change undone from history; with `last`, only those
    /// up to that key (the live read stopped there). `countChange` is what the undoing
    /// did to the range's count: keys created since taken out, keys deleted since put back.
    ///
    /// Only each key's first change after `revision` is kept (its previous item is the
    /// key as it was), and no more than ``EtcdAnswer/maxBytes`` of them: a range whose
    /// past differs from its present by more is refused with ``EtcdError/answerTooLarge``.
    func itemsAt(_ revision: Revision, from items: [Item], current: Revision, range: KeyRange, through last: Key? = nil) async throws -> (items: [Item], countChange: Int) {
        var before: [Key: Item] = [:]
        var changed = Set<Key>()
        var liveNow: [Key: Bool] = [:]
        var undoneBytes = 0
        var from = revision.next
        while from <= current {
            let batch: EventBatch
            do {
                batch = try await store.events(in: config, scope: .prefix(.root), from: from, limit: Limits.maxPageSize)
            } catch let error as DiscfgError where error.code == .compacted {
                throw EtcdError.compacted
            }
            for event in batch.events where event.revision <= current && range.contains(event.key) && EtcdKeys.bytes(event.key.path) != nil {
                liveNow[event.key] = event.item != nil
                guard changed.insert(event.key).inserted else { continue }
                before[event.key] = event.prevItem
                undoneBytes += event.prevItem.map { EtcdAnswer.size($0, keysOnly: false) } ?? 0
                guard undoneBytes <= EtcdAnswer.maxBytes else { throw EtcdError.answerTooLarge }
            }
            guard batch.hasMore else { break }
            from = batch.through.next
        }
        var countChange = 0
        for key in changed {
            switch (liveNow[key] == true, before[key] != nil) {
            case (true, false): countChange -= 1
            case (false, true): countChange += 1
            default: break
            }
        }
        var state: [Key: Item] = [:]
        for item in items where !changed.contains(item.key) { state[item.key] = item }
        for (key, item) in before where last.map({ key <= $0 }) ?? true { state[key] = item }
        let past = state.values.filter { EtcdKeys.bytes($0.key.path) != nil }.sorted { $0.key < $1.key }
        return (past, countChange)
    }

    static func sorted(_ items: [Item], order: RangeQuery.SortOrder, target: RangeQuery.SortTarget) -> [Item] {
        // Items arrive in key order; etcd sorts only when asked (by key, ascending, it
        // already is), and by any other target ascending when no order is given.
        let order = order == .none && target != .key ? .ascend : order
        guard order != .none else { return items }
        let ascending: [Item] = switch target {
        case .key: items
        case .version: items.sorted { ($0.version, $0.key) < ($1.version, $1.key) }
        case .create: items.sorted { ($0.createRevision, $0.key) < ($1.createRevision, $1.key) }
        case .mod: items.sorted { ($0.modRevision, $0.key) < ($1.modRevision, $1.key) }
        case .value: items.sorted { $0.value.lexicographicallyPrecedes($1.value) || ($0.value == $1.value && $0.key < $1.key) }
        }
        return order == .descend ? ascending.reversed() : ascending
    }

    /// Whom a change through the etcd API is recorded as when its caller was not
    /// authenticated: the anonymous etcd client (the API then listens on loopback only).
    public static let unauthenticated = Attribution(principal: Principal(kind: .anonymous, id: "etcd"))

    /// Refuses a transaction whose shape breaks a rule (``Transaction/violation()``),
    /// in etcd's words, before anything is read.
    public static func checkShape(_ transaction: Transaction) throws {
        switch try transaction.violation() {
        case .keyWrittenTwice?: throw EtcdError.duplicateKey
        case .tooManyEntries?: throw EtcdError.tooManyOperations
        case .tooDeep?: throw EtcdError.nestedTooDeep
        case .tooManyEntriesInAll?: throw EtcdError.tooManyOperationsInAll
        case nil: break
        }
    }

    /// Runs a transaction on the config, with etcd's errors. Its ranges reach only
    /// etcd keys (``EtcdKeys/filter``): a compare, read or delete over a range never sees
    /// or touches a key the config holds from other writers. Its reads return at most
    /// ``EtcdAnswer/maxBytes`` together; a transaction whose reads would pass it changes
    /// nothing and is refused with ``EtcdError/answerTooLarge``.
    ///
    /// - Parameter readBudget: the budget of its reads; nil for the server's own reads
    ///   (a lease's keys before they are deleted), which are bounded otherwise.
    public func transact(_ transaction: Transaction, readBudget: ReadBudget? = EtcdAnswer.budget(keysOnly: false, past: .refuse)) async throws -> TransactionResult {
        try Self.checkShape(transaction)
        var transaction = transaction
        transaction.keyFilter = EtcdKeys.filter
        transaction.readBudget = readBudget
        // Who: the caller its service authenticated, when it set one; the etcd API
        // without authentication knows only that a client on this machine called. Named
        // on the transaction, not pushed as a task-local: one push less per call.
        transaction.attribution = transaction.attribution ?? Attribution.current ?? Self.unauthenticated
        do {
            return try await store.transact(transaction, in: config)
        } catch let error as DiscfgError where error == readBudget?.refusal {
            throw EtcdError.answerTooLarge
        }
    }
}

/// etcd's errors, by the messages its clients recognise.
public enum EtcdError {
    /// A read or watch of a revision history no longer holds.
    public static let compacted = DiscfgError(.compacted, "etcdserver: mvcc: required revision has been compacted", field: "revision")
    /// A read of a revision not reached yet.
    public static let futureRevision = DiscfgError(.invalidArgument, "etcdserver: mvcc: required revision is a future revision", field: "revision")
    /// An empty key.
    public static let emptyKey = DiscfgError(.invalidArgument, "etcdserver: key is not provided", field: "key")
    /// `ignore_value` on a key that does not exist: `INVALID_ARGUMENT`, as etcd's
    /// `ErrGRPCKeyNotFound` (the request names a key it may not, not a missing resource).
    public static let keyNotFound = DiscfgError(.invalidArgument, "etcdserver: key not found", field: "key")
    /// A lease this server does not hold.
    public static let leaseNotFound = DiscfgError(.keyNotFound, "etcdserver: requested lease not found", field: "lease")
    /// A transaction writing a key twice.
    public static let duplicateKey = DiscfgError(.invalidArgument, "etcdserver: duplicate key given in txn request", field: "txn")
    /// A lease longer than etcd allows.
    public static let leaseTTLTooLarge = DiscfgError(.invalidArgument, "etcdserver: too large lease TTL", field: "TTL")
    /// The errors etcd answers with `OutOfRange`.
    static let outOfRange: Set<DiscfgError> = [futureRevision, compacted, leaseTTLTooLarge]
    /// etcd's NOSPACE: a change refused because the config is at its quota
    /// (``ConfigSettings/quotaBytes``), answered `RESOURCE_EXHAUSTED` in etcd's words.
    public static let noSpace = DiscfgError(.quotaExceeded, "etcdserver: mvcc: database space exceeded", field: "quotaBytes")
    /// A transaction past the size limit.
    public static let tooManyOperations = DiscfgError(.invalidArgument, "etcdserver: too many operations in txn request", field: "txn")
    /// Transactions nested deeper than ``Limits/maxTransactionDepth``: discfg's bound
    /// (etcd has none), in etcd's manner.
    public static let nestedTooDeep = DiscfgError(
        .invalidArgument, "etcdserver: too many operations in txn request: transactions nest at most \(Limits.maxTransactionDepth) deep on discfg", field: "txn"
    )
    /// A transaction tree past ``Limits/maxTransactionEntries``: discfg's bound (etcd
    /// bounds only each list), in etcd's manner.
    public static let tooManyOperationsInAll = DiscfgError(
        .invalidArgument,
        "etcdserver: too many operations in txn request: a transaction and those nested in it hold at most \(Limits.maxTransactionEntries) compares and operations in all on discfg",
        field: "txn"
    )

    /// A store error in etcd's words where etcd has some (a transaction's shape is
    /// checked, in etcd's words, before it reaches the store): applied once, by
    /// ``EtcdCalls/status(for:)``, as the answer is made.
    static func translated(_ error: DiscfgError) -> DiscfgError {
        error.code == .compacted ? compacted : error
    }
}
