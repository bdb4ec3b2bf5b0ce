import Foundation

extension Transaction {
    /// A rule of shape a transaction breaks, by kind, so a layer speaking another
    /// protocol (the etcd API) can answer in that protocol's words.
    public enum Violation: Hashable, Sendable {
        /// More than ``Limits/maxTransactionOperations`` entries in `part` (`compare`,
        /// `success` or `failure`, or one of a nested transaction's, as
        /// `success[2].compare`).
        case tooManyEntries(part: String, count: Int)
        /// The key at `path` is written more than once in `branch`, nested transactions
        /// included.
        case keyWrittenTwice(path: String, branch: String)
        /// A transaction nested deeper than ``Limits/maxTransactionDepth``, at `part`.
        case tooDeep(part: String)
        /// More than ``Limits/maxTransactionEntries`` comparisons and operations in all.
        case tooManyEntriesInAll(count: Int)

        /// The error a store throws for it.
        public var error: DiscfgError {
            switch self {
            case .tooManyEntries(let part, let count):
                DiscfgError.invalid(part, "a transaction holds at most \(Limits.maxTransactionOperations) entries in \(part), got \(count)")
            case .keyWrittenTwice(let path, let branch):
                DiscfgError.invalid(branch, "key \(path) is written more than once in the transaction's \(branch) operations; a key may be put or deleted once per transaction")
            case .tooDeep(let part):
                DiscfgError.invalid(part, "transactions nest at most \(Limits.maxTransactionDepth) deep; the one at \(part) is deeper")
            case .tooManyEntriesInAll(let count):
                DiscfgError.invalid("transaction", "a transaction holds at most \(Limits.maxTransactionEntries) comparisons and operations in all, nested transactions' included; this one holds more (\(count) counted so far)")
            }
        }
    }

    /// Checks sizes and shapes before any store is touched: at most
    /// ``Limits/maxTransactionOperations`` comparisons and operations in each list,
    /// nested transactions at most ``Limits/maxTransactionDepth`` deep and
    /// ``Limits/maxTransactionEntries`` entries in all, values, TTLs and content types
    /// within limits, comparisons that make sense, and no key written twice in one
    /// branch (a put and a delete of the same key included).
    ///
    /// Keys are checked over the whole tree, as etcd checks them: a key a nested
    /// transaction writes counts as written by the branch holding it, except that its
    /// own success and failure may put the same key, since only one of them runs.
    public func validate() throws {
        if let violation = try violation() { throw violation.error }
    }

    /// The first rule of shape this transaction breaks, or nil; throws for a bad value,
    /// TTL, content type or comparison.
    public func violation() throws -> Violation? {
        var entries = 0
        if let violation = try shapeViolation(depth: 1, at: "", entries: &entries) { return violation }
        // One operation that nests nothing writes no key twice (most transactions are a
        // single put, checked on every hop to the store).
        func mayWriteTwice(_ operations: [TransactionOperation]) -> Bool {
            guard operations.count == 1, let only = operations.first else { return operations.count > 1 }
            if case .nested = only { return true }
            return false
        }
        do {
            if mayWriteTwice(success) { _ = try Self.written(by: success, name: "success") }
            if mayWriteTwice(failure) { _ = try Self.written(by: failure, name: "failure") }
        } catch let found as Found {
            return found.violation
        }
        return nil
    }

    /// Whether a branch holds a nested transaction.
    public var nests: Bool {
        (success + failure).contains { if case .nested = $0 { true } else { false } }
    }

    /// The counts, depth and values of this transaction and those nested in it; `part`
    /// prefixes the names of its lists (`success[2].`).
    private func shapeViolation(depth: Int, at part: String, entries: inout Int) throws -> Violation? {
        let limit = Limits.maxTransactionOperations
        guard compares.count <= limit else { return .tooManyEntries(part: part + "compare", count: compares.count) }
        guard success.count <= limit else { return .tooManyEntries(part: part + "success", count: success.count) }
        guard failure.count <= limit else { return .tooManyEntries(part: part + "failure", count: failure.count) }
        entries += compares.count + success.count + failure.count
        guard entries <= Limits.maxTransactionEntries else { return .tooManyEntriesInAll(count: entries) }
        for comparison in compares { try comparison.validate() }
        if let violation = try Self.shapeViolation(of: success, name: "success", depth: depth, at: part, entries: &entries) { return violation }
        return try Self.shapeViolation(of: failure, name: "failure", depth: depth, at: part, entries: &entries)
    }

    /// The values of a branch's puts, and the shape of its nested transactions.
    private static func shapeViolation(
        of operations: [TransactionOperation], name: String, depth: Int, at part: String, entries: inout Int
    ) throws -> Violation? {
        for (index, operation) in operations.enumerated() {
            switch operation {
            case .put(_, let value, let ttlSeconds, let contentType):
                try Limits.validateValue(value)
                try SetOptions(ttlSeconds: ttlSeconds, contentType: contentType).validate()
            case .nested(let nested):
                let place = "\(part)\(name)[\(index)]"
                guard depth < Limits.maxTransactionDepth else { return .tooDeep(part: place) }
                if let violation = try nested.shapeViolation(depth: depth + 1, at: place + ".", entries: &entries) { return violation }
            case .patch, .delete, .deletePrefix, .deleteRange, .get, .getPrefix, .getRange:
                break
            }
        }
        return nil
    }

    /// A violation found deep in the walk of ``written(by:name:)``.
    private struct Found: Error {
        let violation: Violation
    }

    /// What a list of operations writes, those of its nested transactions included.
    private struct Written {
        var puts: Set<Key> = []
        var deletedKeys: Set<Key> = []
        var deletedRanges: [KeyRange] = []

        func deletes(_ key: Key) -> Bool {
            deletedKeys.contains(key) || deletedRanges.contains { $0.contains(key) }
        }
    }

    /// The keys `operations` put or delete, throwing ``Found`` at the first written
    /// twice: this list's deletes first, then each nested transaction's writes (its two
    /// branches may put the same key), then this list's puts and patches. As etcd's
    /// `checkIntervals`, except that a key a nested transaction puts and a later one
    /// deletes is refused here too, whichever comes first.
    private static func written(by operations: [TransactionOperation], name: String) throws -> Written {
        var written = Written()
        func twice(_ key: Key) -> Found { Found(violation: .keyWrittenTwice(path: key.path, branch: name)) }
        for operation in operations {
            switch operation {
            case .delete(let key): written.deletedKeys.insert(key)
            case .deletePrefix(let prefix): written.deletedRanges.append(prefix.range)
            case .deleteRange(let range): written.deletedRanges.append(range)
            case .put, .patch, .get, .getPrefix, .getRange, .nested: break
            }
        }
        for (index, operation) in operations.enumerated() {
            guard case .nested(let nested) = operation else { continue }
            let then = try Self.written(by: nested.success, name: "\(name)[\(index)].success")
            let otherwise = try Self.written(by: nested.failure, name: "\(name)[\(index)].failure")
            // A key put before this nested transaction and deleted by it (etcd lets it
            // pass, and then writes the key twice in one revision).
            for branch in [then, otherwise] {
                if let key = written.puts.first(where: branch.deletes) { throw twice(key) }
            }
            for key in then.puts {
                guard !written.puts.contains(key), !written.deletes(key) else { throw twice(key) }
                written.puts.insert(key)
            }
            for key in otherwise.puts {
                guard !written.puts.contains(key) || then.puts.contains(key), !written.deletes(key) else { throw twice(key) }
                written.puts.insert(key)
            }
            for branch in [then, otherwise] {
                written.deletedKeys.formUnion(branch.deletedKeys)
                written.deletedRanges += branch.deletedRanges
            }
        }
        for operation in operations {
            switch operation {
            case .put(let key, _, _, _), .patch(let key, _):
                guard !written.puts.contains(key), !written.deletes(key) else { throw twice(key) }
                written.puts.insert(key)
            case .delete, .deletePrefix, .deleteRange, .get, .getPrefix, .getRange, .nested: break
            }
        }
        return written
    }
}
