import Foundation
import DiscfgJSON

extension ChangeTransaction {
    /// Runs a ``Transaction``: expires due keys first (each at its own revision, as every
    /// change does), then evaluates the comparisons against the live items, those of
    /// every transaction nested along the path taken too (``path(of:_:)``), all before
    /// any operation runs; then runs the operations of that path in order. Every change
    /// of the path carries one new revision.
    public mutating func apply(_ transaction: Transaction) throws -> TransactionResult {
        try transaction.validate()
        _ = try expireDue()
        let filter = transaction.keyFilter
        let path = try path(of: transaction, filter)
        var run = TransactionRun(base: try currentRevision(), reads: ReadBudgetState(transaction.readBudget))
        let responses = try apply(path.succeeded ? transaction.success : transaction.failure, path.nested, filter, &run)
        try enforce(run.events, parsed: run.patched)
        return TransactionResult(
            succeeded: path.succeeded, revision: try currentRevision(), responses: responses, events: run.events, cutReads: run.reads.cut
        )
    }

    /// Evaluates a transaction that only reads (``Transaction/writes`` is false) without
    /// writing anything, so a store can answer it from a read snapshot instead of its
    /// writer: due keys are left for the sweeper and read as absent, as ``apply(_:)``
    /// would after expiring them (only the revision differs, by those expiries).
    public func read(_ transaction: Transaction) throws -> TransactionResult {
        precondition(!transaction.writes, "read(_:) evaluates transactions that write nothing")
        try transaction.validate()
        let filter = transaction.keyFilter
        let path = try path(of: transaction, filter)
        var reads = ReadBudgetState(transaction.readBudget)
        var answered = 0
        let responses = try read(path.succeeded ? transaction.success : transaction.failure, path.nested, filter, &reads, &answered)
        return TransactionResult(succeeded: path.succeeded, revision: try currentRevision(), responses: responses, events: [], cutReads: reads.cut)
    }

    /// Which branch `transaction` and each transaction nested along the way takes,
    /// decided against the config as it is now, before any operation of the tree runs
    /// (etcd's `compareToPath`). Only the nested transactions of a branch that runs are
    /// evaluated.
    private func path(of transaction: Transaction, _ filter: KeyFilter?) throws -> TransactionPath {
        let succeeded = try transaction.compares.allSatisfy { try holds($0, filter) }
        var nested: [TransactionPath] = []
        for case .nested(let inner) in succeeded ? transaction.success : transaction.failure {
            nested.append(try path(of: inner, filter))
        }
        return TransactionPath(succeeded: succeeded, nested: nested)
    }

    /// Runs `operations`, a branch that was chosen, with `nested` the paths of its nested
    /// transactions, in order.
    private mutating func apply(
        _ operations: [TransactionOperation], _ nested: [TransactionPath], _ filter: KeyFilter?, _ run: inout TransactionRun
    ) throws -> [TransactionResponse] {
        var responses: [TransactionResponse] = []
        var paths = nested.makeIterator()
        func remove(_ item: Item, _ run: inout TransactionRun) throws -> Event {
            try run.admitChange(config)
            let event = try recordRemoval(of: item, at: try run.nextRevision())
            run.events.append(event)
            return event
        }
        for operation in operations {
            let index = run.answered
            run.answered += 1
            switch operation {
            case .put(let key, let value, let ttlSeconds, let contentType):
                try run.admitChange(config)
                let event = try recordPut(
                    key, value, contentType: contentType, expiresAt: expiry(afterSeconds: ttlSeconds), over: try storedItem(key), at: try run.nextRevision()
                )
                run.events.append(event)
                responses.append(.put(event))
            case .patch(let key, let patch):
                try run.admitChange(config)
                let (event, value) = try recordPatch(key, patch, at: try run.nextRevision())
                run.patched[key] = value
                run.events.append(event)
                responses.append(.put(event))
            case .delete(let key):
                try SchemaTarget.refuseDeleting(key)
                responses.append(.delete(try storedItem(key).map { [try remove($0, &run)] } ?? []))
            case .deletePrefix(let prefix):
                try SchemaTarget.refuseDeleting(prefix)
                let items = try storedItems(under: prefix).filter { (filter?.admits($0.key) ?? true) && !SchemaTarget.isReserved($0.key) }
                responses.append(.delete(try items.map { try remove($0, &run) }))
            case .deleteRange(let range):
                let items = try storedItems(in: range).filter { (filter?.admits($0.key) ?? true) && !SchemaTarget.isReserved($0.key) }
                responses.append(.delete(try items.map { try remove($0, &run) }))
            case .get(let key):
                responses.append(.get(try read(.key(key), filter, &run.reads, at: index)))
            case .getPrefix(let prefix):
                responses.append(.get(try read(.prefix(prefix), filter, &run.reads, at: index)))
            case .getRange(let range):
                responses.append(.get(try read(.range(range), filter, &run.reads, at: index)))
            case .nested(let inner):
                guard let path = paths.next() else { preconditionFailure("a nested transaction without its path") }
                let answers = try apply(path.succeeded ? inner.success : inner.failure, path.nested, filter, &run)
                responses.append(.nested(succeeded: path.succeeded, responses: answers))
            }
        }
        return responses
    }

    /// Reads `operations`, a branch that was chosen and writes nothing, as
    /// ``apply(_:_:_:_:)`` runs one.
    private func read(
        _ operations: [TransactionOperation], _ nested: [TransactionPath], _ filter: KeyFilter?,
        _ reads: inout ReadBudgetState, _ answered: inout Int
    ) throws -> [TransactionResponse] {
        var responses: [TransactionResponse] = []
        var paths = nested.makeIterator()
        for operation in operations {
            let index = answered
            answered += 1
            switch operation {
            case .get(let key): responses.append(.get(try read(.key(key), filter, &reads, at: index)))
            case .getPrefix(let prefix): responses.append(.get(try read(.prefix(prefix), filter, &reads, at: index)))
            case .getRange(let range): responses.append(.get(try read(.range(range), filter, &reads, at: index)))
            case .nested(let inner):
                guard let path = paths.next() else { preconditionFailure("a nested transaction without its path") }
                let answers = try read(path.succeeded ? inner.success : inner.failure, path.nested, filter, &reads, &answered)
                responses.append(.nested(succeeded: path.succeeded, responses: answers))
            case .put, .patch, .delete, .deletePrefix, .deleteRange: preconditionFailure("a transaction that writes nothing has no \(operation)")
            }
        }
        return responses
    }

    /// Offers the live items of a comparison's or read's subject, with this
    /// transaction's changes (due keys were expired before), in key order, to `body`
    /// until it returns false; over a range, only the keys `filter` admits.
    private func forEachLiveItem(_ subject: Comparison.Subject, _ filter: KeyFilter?, _ body: (Item) throws -> Bool) throws {
        let range: KeyRange
        switch subject {
        case .key(let key):
            if let item = try storedItem(key), !item.isExpired(at: now) { _ = try body(item) }
            return
        case .prefix(let prefix): range = prefix.range
        case .range(let keys): range = keys
        }
        try forEachStoredItem(in: range) { item in
            guard !item.isExpired(at: now), filter?.admits(item.key) ?? true else { return true }
            return try body(item)
        }
    }

    /// Whether a comparison holds, read one item at a time: it stops at the first item
    /// it fails for, and never holds a whole range.
    private func holds(_ comparison: Comparison, _ filter: KeyFilter?) throws -> Bool {
        var found = false
        var holds = true
        try forEachLiveItem(comparison.subject, filter) { item in
            found = true
            // For one item, "holds for every item" and "exists" both read that item.
            holds = comparison.holds(for: [item])
            return holds
        }
        return found ? holds : comparison.holds(for: [])
    }

    /// The live items a read returns, within the transaction's read budget.
    private func read(_ subject: Comparison.Subject, _ filter: KeyFilter?, _ reads: inout ReadBudgetState, at index: Int) throws -> [Item] {
        var kept: [Item] = []
        try forEachLiveItem(subject, filter) { item in
            try reads.offer(item, at: index, into: &kept)
            return true
        }
        return kept
    }
}

/// The branch a transaction takes, and those of the transactions nested in it along the
/// way, decided before any operation runs.
private struct TransactionPath {
    /// Whether its comparisons held (so `success` runs).
    let succeeded: Bool
    /// The paths of the nested transactions of the branch that runs, in its order.
    let nested: [TransactionPath]
}

/// What one transaction's run has done so far, across its nested transactions.
private struct TransactionRun {
    /// The config's revision before the transaction's first change.
    let base: Revision
    /// The transaction's one revision, once it changed a key.
    var revision: Revision?
    var events: [Event] = []
    /// The values patches made, parsed, for the schema checks.
    var patched: [Key: JSONValue] = [:]
    var reads: ReadBudgetState
    /// How many operations of the tree ran before the next one: a read's index in
    /// ``TransactionResult/cutReads``.
    var answered = 0

    init(base: Revision, reads: ReadBudgetState) {
        self.base = base
        self.reads = reads
    }

    mutating func nextRevision() throws -> Revision {
        if let revision { return revision }
        let next = try base.successor()
        revision = next
        return next
    }

    /// Refuses one change more than ``Limits/maxTransactionChanges``.
    func admitChange(_ config: ConfigName) throws {
        guard events.count < Limits.maxTransactionChanges else {
            throw DiscfgError(
                .tooLarge,
                "this transaction changes more than \(Limits.maxTransactionChanges) keys of config \"\(config)\"; it was refused, so nothing was written: delete a narrower prefix or split the transaction",
                field: "transaction"
            )
        }
    }
}
