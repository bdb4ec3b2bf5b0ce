import DiscfgCore

extension AuditRecord {
    /// What a transaction reaches, for its audit line: the keys, prefixes and ranges it
    /// compares (`compared`), reads (`read`) and changes (`changed`), as a line names
    /// a request's key. A key is its path (`/db/host`), a prefix its path, which ends in
    /// `/` (`/app/`), a range `[from, to)` (`[/a, /c)`, `[/a, end)`).
    ///
    /// Both branches are named, for which one runs is known only once it has run (the
    /// line's `revision` says whether anything changed). Each list keeps the
    /// transaction's order and names each thing once, at most ``limit`` of them, then
    /// one more entry saying how many are left out (`+8 more`): a line stays a line
    /// whatever a request holds.
    ///
    /// ```swift
    /// record.transaction = AuditRecord.TransactionNames(transaction)
    /// // "compared":["/lock"],"read":["/owner"],"changed":["/lock","/tmp/"]
    /// ```
    public struct TransactionNames: Sendable, Equatable {
        /// The most names a list holds before `+N more`.
        public static let limit = 32

        /// What the comparisons reach, those of nested transactions too.
        public var compared: [String]
        /// What the `get`s of either branch read, nested transactions' included.
        public var read: [String]
        /// What the `put`s, patches and deletes of either branch change, nested
        /// transactions' included.
        public var changed: [String]

        /// The names of what `transaction` reaches.
        public init(_ transaction: Transaction) {
            var compared = Names(), read = Names(), changed = Names()
            func add(_ transaction: Transaction) {
                for comparison in transaction.compares {
                    switch comparison.subject {
                    case .key(let key): compared.add(key.path)
                    case .prefix(let prefix): compared.add(prefix.path)
                    case .range(let range): compared.add(range.description)
                    }
                }
                for operation in transaction.success + transaction.failure {
                    switch operation {
                    case .get(let key): read.add(key.path)
                    case .getPrefix(let prefix): read.add(prefix.path)
                    case .getRange(let range): read.add(range.description)
                    case .put(let key, _, _, _), .patch(let key, _), .delete(let key): changed.add(key.path)
                    case .deletePrefix(let prefix): changed.add(prefix.path)
                    case .deleteRange(let range): changed.add(range.description)
                    case .nested(let nested): add(nested)
                    }
                }
            }
            add(transaction)
            self.compared = compared.list
            self.read = read.list
            self.changed = changed.list
        }

        /// One list being named: the first ``limit`` distinct names, and how many others.
        private struct Names {
            var seen: Set<String> = []
            var names: [String] = []
            var more = 0

            mutating func add(_ name: String) {
                guard seen.insert(name).inserted else { return }
                if names.count < TransactionNames.limit { names.append(name) } else { more += 1 }
            }

            var list: [String] { more == 0 ? names : names + ["+\(more) more"] }
        }
    }
}
