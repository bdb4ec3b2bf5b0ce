import Foundation

/// A config's live items at one revision: what `export` writes and `import` reads.
public struct ConfigSnapshot: Hashable, Sendable {
    /// The config it came from, when known.
    public var config: ConfigName?
    /// The revision it was taken at, when known.
    public var revision: Revision?
    /// When it was taken, when known.
    public var exportedAt: Date?
    /// The items, in key order.
    public var items: [Entry]
    /// Why it is imported, from the document's `message`: recorded with the change beside
    /// who made it (a REST request's `Discfg-Message` header, or `-m`, takes its place).
    public var message: String?

    /// One key's value in a snapshot.
    public struct Entry: Hashable, Sendable {
        /// The key.
        public var key: Key
        /// Its value.
        public var value: Data
        /// Its media type.
        public var contentType: String?
        /// When it expires, if it has a TTL.
        public var expiresAt: Date?

        /// Creates an entry.
        public init(key: Key, value: Data, contentType: String? = nil, expiresAt: Date? = nil) {
            self.key = key
            self.value = value
            self.contentType = contentType
            self.expiresAt = expiresAt
        }

        /// The entry for an item.
        public init(_ item: Item) {
            self.init(key: item.key, value: item.value, contentType: item.contentType, expiresAt: item.expiresAt)
        }
    }

    /// Creates a snapshot.
    public init(config: ConfigName? = nil, revision: Revision? = nil, exportedAt: Date? = nil, items: [Entry], message: String? = nil) {
        self.config = config
        self.revision = revision
        self.exportedAt = exportedAt
        self.items = items
        self.message = message
    }

    /// Checks every entry against the limits and that no key appears twice.
    public func validate() throws {
        var seen = Set<Key>()
        for entry in items {
            guard seen.insert(entry.key).inserted else {
                throw DiscfgError.invalid("items", "key \(entry.key) appears more than once")
            }
            try Limits.validateValue(entry.value)
            if let contentType = entry.contentType { try Limits.validateContentType(contentType) }
        }
    }
}
