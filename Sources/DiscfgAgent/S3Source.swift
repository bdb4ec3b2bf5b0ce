import DiscfgAWS
import DiscfgCore
import Foundation
import Synchronization

/// Published snapshots in S3 as an agent's source (`discfg agent --source s3://BUCKET/PREFIX`):
/// config `CONFIG` is the object `PREFIX/CONFIG.json` that `discfg publish` writes.
///
/// Each check is one `GetObject` with `If-None-Match` on the entity tag last read: an
/// unchanged object answers `304 Not Modified` and costs nothing more. A changed one is
/// decoded strictly (``PublishedSnapshot/init(decoding:maxBytes:key:)``) and taken only when it
/// holds the config asked for at a revision no older than the one held; anything else (a
/// corrupt, truncated, foreign or older object) is refused with an error naming the object,
/// and the copy held stays (a config deleted and created again, which starts at revision 1,
/// is told by the later creation time in the object's metadata). Given a ``SnapshotKey``,
/// an object not signed with it (unsigned, or forged by someone who can write the bucket)
/// is refused the same way. A refused object's entity tag is remembered too, so it is not
/// downloaded again while it stays, and each check goes on failing until it is replaced.
///
/// S3 keeps no history: ``changes(in:after:)`` is always nil, and the follower installs the
/// whole snapshot, from which ``ReplicaStore`` derives the events its watchers see.
///
/// ```swift
/// let source = S3Source(s3: client, destination: try SnapshotDestination(parsing: "s3://acme/prod"))
/// let agent = Agent(source: source, configs: [app], interval: .seconds(15))
/// ```
public final class S3Source: AgentSource {
    /// The bucket and prefix the snapshots are under.
    public let destination: SnapshotDestination
    /// The key every object must be signed with (`--snapshot-key-file`); nil to take
    /// objects whose sha256 holds, which anyone who can write the bucket can make.
    public let key: SnapshotKey?
    private let s3: S3Client
    private let state = Mutex<[ConfigName: Held]>([:])

    /// What is known of one config's object.
    private struct Held {
        /// The last snapshot taken, and the entity tag it came under (nil when it came
        /// from elsewhere, e.g. the agent's cache).
        var snapshot: PublishedSnapshot?
        var etag: String?
        /// The config's creation time the object's metadata gave (`discfg-created`).
        var created: Int64?
        /// The object last refused, and why; checks fail with this while it stays.
        var refused: (etag: String, error: DiscfgError)?
    }

    /// A source reading `destination` through `s3`, taking only objects signed with `key`
    /// when one is given.
    public init(s3: S3Client, destination: SnapshotDestination, key: SnapshotKey? = nil) {
        self.s3 = s3
        self.destination = destination
        self.key = key
    }

    /// `s3://BUCKET/PREFIX`.
    public var description: String { destination.description }

    /// The object of `config`, as `s3://BUCKET/KEY`.
    public func location(of config: ConfigName) -> String { "s3://\(destination.bucket)/\(destination.key(for: config))" }

    /// One conditional GET; the revision of the snapshot held after it.
    /// - Throws: `invalidArgument` (field `snapshot`) for an object refused; `unavailable`,
    ///   `permissionDenied` or `configNotFound` naming the object when S3 failed.
    public func revision(of config: ConfigName) async throws -> Revision {
        let held = state.withLock { $0[config] } ?? Held()
        let result: S3GetResult
        do {
            result = try await s3.getObject(bucket: destination.bucket, key: destination.key(for: config), ifNoneMatch: held.refused?.etag ?? held.etag)
        } catch let error as S3Error {
            throw failure(error, config: config)
        }
        switch result {
        case .notModified:
            if let refused = held.refused { throw refused.error }
            guard let snapshot = held.snapshot else {
                throw DiscfgError(.unavailable, "\(location(of: config)) answered 304 Not Modified to a read that held no copy")
            }
            return snapshot.revision
        case .object(let object):
            do {
                let created = object.head.metadata[Self.createdMetadata].flatMap(Int64.init)
                let snapshot = try accept(object.body, config: config, created: created, over: held)
                state.withLock { $0[config] = Held(snapshot: snapshot, etag: object.head.etag, created: created) }
                return snapshot.revision
            } catch let error as DiscfgError {
                state.withLock { $0[config, default: held].refused = (object.head.etag, error) }
                throw error
            }
        }
    }

    /// Always nil: S3 keeps no history, the follower loads the whole snapshot.
    public func changes(in config: ConfigName, after revision: Revision) async throws -> (events: [Event], through: Revision)? {
        nil
    }

    /// The snapshot the last check took (one more check when there was none).
    public func load(_ config: ConfigName) async throws -> PublishedSnapshot {
        if let snapshot = state.withLock({ $0[config]?.snapshot }) { return snapshot }
        _ = try await revision(of: config)
        guard let snapshot = state.withLock({ $0[config]?.snapshot }) else {
            throw DiscfgError(.unavailable, "no snapshot of config \"\(config)\" was read from \(location(of: config))")
        }
        return snapshot
    }

    /// Starts from a copy held elsewhere (the cache): no object older than it is taken.
    public func resume(from copy: PublishedSnapshot) {
        state.withLock { held in
            guard (held[copy.config]?.snapshot?.revision ?? .zero) < copy.revision else { return }
            held[copy.config] = Held(snapshot: copy, etag: nil)
        }
    }

    /// The object metadata holding the config's creation time, in milliseconds, that
    /// `discfg publish` writes: a config deleted and created again starts at revision 1.
    static let createdMetadata = "discfg-created"

    /// The snapshot in `body` when it may replace what is held: not older, unless its
    /// config was created after the one held (deleted and created again).
    private func accept(_ body: Data, config: ConfigName, created: Int64?, over held: Held) throws -> PublishedSnapshot {
        let current = held.snapshot
        let object = location(of: config)
        let snapshot: PublishedSnapshot
        do { snapshot = try PublishedSnapshot(decoding: body, key: key) } catch let error as DiscfgError {
            throw DiscfgError.invalid("snapshot", "\(object) refused, the copy held stays: \(error.message)")
        }
        guard snapshot.config == config else {
            throw DiscfgError.invalid("snapshot", "\(object) refused, the copy held stays: it holds config \"\(snapshot.config)\", not \"\(config)\"")
        }
        let recreated = created.map { new in held.created.map { new > $0 } ?? false } ?? false
        if let current, snapshot.revision < current.revision, !recreated {
            throw DiscfgError.invalid(
                "snapshot", "\(object) refused, the copy held stays: it is at revision \(snapshot.revision), older than the revision \(current.revision) held")
        }
        return snapshot
    }

    /// An S3 failure as the follower reports it: what, on which object, and what to do.
    private func failure(_ error: S3Error, config: ConfigName) -> DiscfgError {
        let object = location(of: config)
        switch error.code {
        case .noSuchKey:
            return DiscfgError(.configNotFound, "no snapshot at \(object) (publish one with: discfg publish \(config) --to \(destination))", field: "config")
        case .noSuchBucket:
            return DiscfgError(.unavailable, "cannot read \(object): \(error.description)", field: "source")
        case .accessDenied:
            return DiscfgError(.permissionDenied, "cannot read \(object): \(error.description)", field: "source")
        default:
            return DiscfgError(.unavailable, "cannot read \(object): \(error.description)", field: "source")
        }
    }
}
