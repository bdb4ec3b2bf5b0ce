import Foundation

/// A key's value and the metadata that makes compare-and-swap and history possible.
public struct Item: Hashable, Sendable {
    /// Where the value lives.
    public var key: Key
    /// The stored bytes, exactly as they were set.
    public var value: Data
    /// The media type given when the value was set, e.g. `application/json`.
    public var contentType: String?
    /// 1 when the key is created, +1 on every update; back to 1 after a delete.
    public var version: UInt64
    /// The revision at which this incarnation of the key was created.
    public var createRevision: Revision
    /// The revision of the change that wrote this value.
    public var modRevision: Revision
    /// When the value was written.
    public var modifiedAt: Date
    /// When the value stops being readable, if it was set with a TTL.
    public var expiresAt: Date?

    /// Creates an item.
    public init(
        key: Key, value: Data, contentType: String? = nil, version: UInt64,
        createRevision: Revision, modRevision: Revision, modifiedAt: Date, expiresAt: Date? = nil
    ) {
        self.key = key
        self.value = value
        self.contentType = contentType
        self.version = version
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.modifiedAt = modifiedAt
        self.expiresAt = expiresAt
    }

    /// Whether the item's TTL has run out at `now`.
    public func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }

    /// The value as text when it is valid UTF-8.
    public var text: String? { String(validating: value, as: UTF8.self) }
}

/// One change in a configuration's history.
public struct Event: Hashable, Sendable {
    /// What the change did.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// The key was created or updated.
        case put
        /// The key was deleted.
        case delete
        /// The key's TTL ran out and it was removed.
        case expire
    }

    /// What the change did.
    public var kind: Kind
    /// The config revision the change made.
    public var revision: Revision
    /// The key it changed.
    public var key: Key
    /// When it happened.
    public var at: Date
    /// The item after the change; nil for `delete` and `expire`.
    public var item: Item?
    /// The item before the change; nil when the key did not exist.
    public var prevItem: Item?
    /// Who made the change and why, recorded with it; nil for changes recorded without
    /// one (before attribution existed, or by a face that set none): unknown.
    public var attribution: Attribution?

    /// Creates an event.
    public init(kind: Kind, revision: Revision, key: Key, at: Date, item: Item?, prevItem: Item?, attribution: Attribution? = nil) {
        self.kind = kind
        self.revision = revision
        self.key = key
        self.at = at
        self.item = item
        self.prevItem = prevItem
        self.attribution = attribution
    }
}
