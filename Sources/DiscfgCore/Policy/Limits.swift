import Foundation

/// The size and shape rules every store enforces, so a value accepted by one store is
/// accepted by all of them (DynamoDB's 400 KB item limit is what bounds the value).
public enum Limits {
    /// The largest value, in bytes: 256 KiB.
    public static let maxValueBytes = 256 * 1024
    /// The longest content type.
    public static let maxContentTypeLength = 255
    /// The longest TTL: ten years.
    public static let maxTTLSeconds: Int64 = 10 * 365 * 24 * 3600
    /// The most entries one list or history page returns.
    public static let maxPageSize = 1000
    /// The largest snapshot file `import` reads: 16 MiB.
    public static let maxSnapshotBytes = 16 * 1024 * 1024
    /// The largest patch body a `PATCH` reads: 512 KiB, room for a JSON patch that tests
    /// a whole value of the largest size and replaces it with another.
    public static let maxPatchBytes = 2 * maxValueBytes
    /// The most operations of one JSON patch (RFC 6902): a patch is applied while the
    /// store's writer is held, so its length is bounded as it is read (13,700 moves fit in
    /// the 512 KiB body and held the writer for seconds).
    public static let maxPatchOperations = 1000
    /// The most values (each array, object and scalar inside) the `copy` operations of one
    /// JSON patch may duplicate, values a `move` takes deeper included: as many as the
    /// largest value holds (131,072 numbers in 256 KiB), so a patch cannot build a document
    /// many times that size while it holds the writer (seven copies of such a value took
    /// half a second, only to be refused as too large).
    public static let maxPatchCopiedValues = maxValueBytes / 2
    /// The page size when a caller does not say.
    public static let defaultPageSize = 100
    /// The most bytes of keys and values one page of keys, history or events holds (and
    /// a store reads for it): 4 MiB. A page always holds at least one entry, however large,
    /// so `limit=1000` of 256 KiB values is cut to a page of 16 rather than 256 MB.
    public static let maxPageBytes = 4 * 1024 * 1024
    /// The most comparisons, and the most operations in each branch, of one transaction
    /// (etcd's default `--max-txn-ops`).
    public static let maxTransactionOperations = 128
    /// How deep transactions nest (``TransactionOperation/nested(_:)``): a transaction
    /// holding one that holds another is 3 deep. etcd sets no bound; discfg bounds it so
    /// that checking and running a tree never recurses far, and a client that nests by
    /// mistake without end is told so.
    public static let maxTransactionDepth = 16
    /// The most comparisons and operations of one transaction in all, those of every
    /// nested transaction counted: ``maxTransactionOperations`` bounds each list, and
    /// nesting would otherwise multiply it (128 nested transactions of 128 nested
    /// transactions of 128 comparisons is two million, each read while the store's writer
    /// is held). A flat transaction at every list's limit holds 384.
    public static let maxTransactionEntries = 1_024
    /// The most keys one transaction may change, delete-prefix operations included. Every
    /// change of a transaction shares one revision, and a page of events never splits a
    /// revision, so this also bounds how far one page of events may run past its limit.
    /// High enough for etcd's DeleteRange of what a client wrote (`etcdctl check perf`
    /// leaves about 9,000 keys to delete at once); DynamoDB holds fewer in one of its
    /// transactions (about 49 keys set, 33 deleted).
    public static let maxTransactionChanges = 100_000

    /// The most bytes of key paths and values under a prefix whose document a schema
    /// checks: 4 MiB. Every change under a prefix with a schema builds its whole document
    /// while it holds the store's writer; past this a change there (or attaching a schema
    /// there) is refused with `tooLarge`, counted before any document is built.
    public static let maxSchemaDocumentBytes = 4 * 1024 * 1024

    /// The largest config quota (``ConfigSettings/quotaBytes``): 1 PiB, far past what
    /// any store here holds for one config, yet far from overflowing a byte count.
    public static let maxQuotaBytes: Int64 = 1 << 50

    /// Checks a value's size.
    public static func validateValue(_ value: Data) throws {
        guard value.count <= maxValueBytes else {
            throw DiscfgError(.tooLarge, "value is \(value.count) bytes; the limit is \(maxValueBytes) bytes (256 KiB)", field: "value")
        }
    }

    /// Checks a content type looks like `type/subtype` with optional parameters.
    public static func validateContentType(_ contentType: String) throws {
        let parts = contentType.split(separator: ";", maxSplits: 1)
        let media = parts.first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let pieces = media.split(separator: "/", omittingEmptySubsequences: false)
        let isToken: (Substring) -> Bool = { piece in
            !piece.isEmpty && piece.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 32 && $0.value < 127 && !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains($0) }
        }
        guard contentType.count <= maxContentTypeLength, pieces.count == 2, isToken(pieces[0]), isToken(pieces[1]),
              contentType.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 32 && $0.value < 127 })
        else {
            throw DiscfgError.invalid("contentType", "content type \"\(contentType.debugEscaped)\" is not a media type such as application/json")
        }
    }

    /// Checks a TTL in seconds is positive and at most ten years.
    public static func validateTTL(seconds: Int64) throws {
        guard seconds > 0, seconds <= maxTTLSeconds else {
            throw DiscfgError.invalid("ttl", "ttl must be between 1 second and 10 years, got \(seconds) seconds")
        }
    }

    /// Checks a page's byte budget.
    public static func validatePageBytes(_ maxBytes: Int) throws {
        guard maxBytes >= 1 else {
            throw DiscfgError.invalid("maxBytes", "maxBytes must be at least 1, got \(maxBytes)")
        }
    }

    /// Checks a page size.
    public static func validatePageSize(_ limit: Int) throws {
        guard (1...maxPageSize).contains(limit) else {
            throw DiscfgError.invalid("limit", "limit must be between 1 and \(maxPageSize), got \(limit)")
        }
    }
}
