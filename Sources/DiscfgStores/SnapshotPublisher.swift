import DiscfgAWS
import DiscfgCore
import Foundation

/// Writes configs' PublishedSnapshot documents to S3, never an older revision over a
/// newer one.
///
/// Each object carries its revision in metadata (`x-amz-meta-discfg-revision`) and the
/// config's creation time (`x-amz-meta-discfg-created`, milliseconds). A publish reads the
/// object's head, does nothing when the object is at the same revision or a later one, and
/// otherwise writes with `If-Match` on the entity tag it read (`If-None-Match: *` when
/// there was none), so a concurrent publisher that got there first makes S3 refuse the
/// write; the head is then read again. The document is the same bytes for the same
/// revision, so its ETag stands for the revision too. With a ``SnapshotKey`` each document
/// is signed (and its signature kept in `x-amz-meta-discfg-signature`), for agents that
/// take only signed snapshots.
///
/// ```swift
/// let publisher = SnapshotPublisher(s3: client)
/// let outcome = try await publisher.publish(config: name, from: store, to: destination)
/// ```
public struct SnapshotPublisher: Sendable {
    /// What a publish did.
    public enum Outcome: Sendable, Hashable {
        /// The object now holds this revision, under this entity tag.
        case published(Revision, etag: String)
        /// The object already held this revision (ours or later): nothing was written.
        case upToDate(Revision)
    }

    /// The client the objects are written with.
    public let s3: S3Client
    /// How many times a write that lost a race reads the head again.
    public var maxRaces = 5
    /// The key the documents are signed with (`publish --snapshot-key-file`); nil for none.
    public var key: SnapshotKey?

    /// The metadata name of the config's creation time, which tells a deleted config's
    /// snapshot (revisions start again at 1 for its namesake) from the current one's.
    public static let createdMetadata = "discfg-created"
    /// The metadata name of the document's signature, so that an object of the same
    /// revision unsigned, or signed with another key, is written again when the key changes.
    public static let signatureMetadata = "discfg-signature"

    /// A publisher writing through `s3`, signing with `key` when given.
    public init(s3: S3Client, key: SnapshotKey? = nil) {
        self.s3 = s3
        self.key = key
    }

    /// Reads `config`'s current state from `store` and publishes it (when it moved).
    ///
    /// - Throws: the store's errors (`configNotFound`), ``S3Error`` (no bucket, no
    ///   permission, unreachable), `failedPrecondition` when the key holds an object
    ///   discfg did not write.
    public func publish(config: ConfigName, from store: any ConfigStore, to destination: SnapshotDestination,
                        deadline: ContinuousClock.Instant? = nil) async throws -> Outcome {
        let info = try await store.configInfo(config)
        let snapshot = try await PublishedSnapshot.read(from: store, config: config)
        return try await publish(snapshot, createdAt: info.createdAt, to: destination, deadline: deadline)
    }

    /// Publishes `snapshot` of a config created at `createdAt`.
    public func publish(_ snapshot: PublishedSnapshot, createdAt: Date, to destination: SnapshotDestination,
                        deadline: ContinuousClock.Instant? = nil) async throws -> Outcome {
        let key = destination.key(for: snapshot.config)
        let created = createdAt.milliseconds
        let signature = self.key.map { $0.signature(of: snapshot) }
        var body: Data?
        for _ in 0...maxRaces {
            let head = try await s3.headObject(bucket: destination.bucket, key: key, deadline: deadline)
            if let head {
                guard let stored = head.metadata[SnapshotDestination.revisionMetadata].flatMap(UInt64.init) else {
                    throw DiscfgError(.conditionFailed, "s3://\(destination.bucket)/\(key) exists and is not a discfg snapshot (no \(SnapshotDestination.revisionMetadata) metadata); remove it or publish under another prefix")
                }
                let storedCreated = head.metadata[Self.createdMetadata].flatMap(Int64.init) ?? created
                // The same revision is written again only to sign it as this publisher does.
                let resign = signature != nil && stored == snapshot.revision.rawValue && head.metadata[Self.signatureMetadata] != signature
                if storedCreated > created || (storedCreated == created && stored >= snapshot.revision.rawValue && !resign) {
                    return .upToDate(Revision(stored))
                }
            }
            let document = body ?? snapshot.encoded(signedWith: self.key)
            body = document
            var metadata = [SnapshotDestination.revisionMetadata: String(snapshot.revision.rawValue), Self.createdMetadata: String(created)]
            if let signature { metadata[Self.signatureMetadata] = signature }
            do {
                let etag = try await s3.putObject(
                    bucket: destination.bucket, key: key, body: document, contentType: "application/json",
                    metadata: metadata,
                    condition: head.map { .etag($0.etag) } ?? .absent, deadline: deadline
                )
                return .published(snapshot.revision, etag: etag)
            } catch let error as S3Error where error.code == .preconditionFailed {
                continue  // another publisher wrote first: look at what it wrote
            }
        }
        throw DiscfgError(.unavailable, "s3://\(destination.bucket)/\(key) kept changing while it was being published (\(maxRaces + 1) tries); try again")
    }
}
