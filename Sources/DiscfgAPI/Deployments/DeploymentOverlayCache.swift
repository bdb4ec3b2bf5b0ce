import DiscfgCore
import Foundation
import Synchronization

/// Each config's ``DeploymentOverlay``, read from the store at most once per
/// ``freshness``: a read naming an entity needs the running deployments and their staged
/// values, and most configs have none, so a config without one costs one small read a
/// second, not one per request.
///
/// A deployment started, rolled back or completed reaches these readers within
/// ``freshness``; exposure itself needs no read at all (the clock moves the share).
final class DeploymentOverlayCache: Sendable {
    private struct Entry {
        var readAt: ContinuousClock.Instant
        var overlay: DeploymentOverlay
    }

    /// How long an overlay read is used before it is read again.
    static let freshness: Duration = .seconds(1)
    /// The most configs held; past it the cache starts again.
    static let capacity = 1024

    private let entries = Mutex<[ConfigName: Entry]>([:])

    init() {}

    /// The overlay of `config`, read with `read` when none is fresh.
    func overlay(_ config: ConfigName, read: () async throws -> DeploymentOverlay) async throws -> DeploymentOverlay {
        let now = ContinuousClock.now
        if let held = entries.withLock({ $0[config] }), now - held.readAt < Self.freshness { return held.overlay }
        let overlay = try await read()
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[config] == nil { entries.removeAll() }
            entries[config] = Entry(readAt: now, overlay: overlay)
        }
        return overlay
    }
}
