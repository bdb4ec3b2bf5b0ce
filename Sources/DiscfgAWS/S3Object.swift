import Foundation

/// What S3 says about an object without its body (`HeadObject`, or the head of a `GetObject`).
public struct S3ObjectHead: Sendable, Hashable {
    /// The entity tag as S3 sends it, quotes included (`"9a0364b9…"`); give it back as is
    /// in `If-Match` / `If-None-Match`.
    public var etag: String
    /// The object's `Content-Type`.
    public var contentType: String?
    /// The object's size in bytes, when the answer said.
    public var contentLength: Int?
    /// User metadata (`x-amz-meta-NAME`), by lowercase name without the prefix.
    public var metadata: [String: String]

    /// Creates a head.
    public init(etag: String, contentType: String? = nil, contentLength: Int? = nil, metadata: [String: String] = [:]) {
        self.etag = etag
        self.contentType = contentType
        self.contentLength = contentLength
        self.metadata = metadata
    }
}

/// An object read whole.
public struct S3Object: Sendable, Hashable {
    /// Its head.
    public var head: S3ObjectHead
    /// Its bytes.
    public var body: Data

    /// Creates an object.
    public init(head: S3ObjectHead, body: Data) {
        self.head = head
        self.body = body
    }
}

/// The answer to a conditional `GetObject`.
public enum S3GetResult: Sendable, Hashable {
    /// The object still has the entity tag the caller holds (`304 Not Modified`).
    case notModified
    /// The object, changed (or read unconditionally).
    case object(S3Object)
}

/// A condition on `PutObject`, which S3 checks atomically with the write.
public enum S3WriteCondition: Sendable, Hashable {
    /// Write only when no object exists at the key (`If-None-Match: *`).
    case absent
    /// Write only when the object still has this entity tag (`If-Match`).
    case etag(String)
}
