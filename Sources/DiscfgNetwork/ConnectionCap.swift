import NIOCore
import Synchronization

/// What one server allows its connections: how many are served at once, and how long
/// a client may leave the server's answers unread. The one cap of the REST API and the
/// etcd API.
///
/// Both protect the server from clients, not from load: a flood of connections is
/// turned away at once instead of piling up (the REST API answers `503` with
/// `Retry-After`, the etcd API closes, which gRPC clients retry later), and a client
/// that stops reading (an event stream or a watch nobody drains, a large page to a
/// stalled peer) is disconnected instead of holding its connection, its watch and its
/// buffers for ever.
///
/// A connection is counted in with ``admit()`` and out with ``leave()`` by the handler
/// that keeps it, or with ``admit(_:)``, which counts a channel until it closes and
/// keeps it for ``quiesceAll()`` and ``closeAll()``.
///
/// ```swift
/// let cap = ConnectionCap(limit: 4096, stallTimeout: .seconds(30))
/// guard cap.admit(channel) else { return channel.close() }
/// ```
public final class ConnectionCap: Sendable {
    /// The most connections served at once.
    public let limit: Int
    /// How long a client may keep a connection's send buffer full (NIO's high-water
    /// mark, with the kernel's buffer below it full too) without draining it to the
    /// low-water mark: a client reading nothing, or a trickle.
    public let stallTimeout: Duration
    /// Connections being served now.
    private let open = Atomic<Int>(0)
    /// The channels admitted with ``admit(_:)`` and not yet closed.
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    /// Creates the cap of one server.
    ///
    /// - Parameters:
    ///   - limit: the most connections served at once.
    ///   - stallTimeout: how long a client may leave the server's answers unread.
    public init(limit: Int, stallTimeout: Duration) {
        self.limit = limit
        self.stallTimeout = stallTimeout
    }

    /// How many connections are being served now.
    public var openConnections: Int { open.load(ordering: .relaxed) }

    /// ``stallTimeout`` as NIO schedules it.
    public var stallTimeAmount: TimeAmount { TimeAmount(stallTimeout) }

    /// Counts a connection in; false, counting nothing, when the server already serves
    /// ``limit``. Each admitted connection must ``leave()`` once.
    public func admit() -> Bool {
        let now = open.add(1, ordering: .relaxed).newValue
        if now <= limit { return true }
        open.subtract(1, ordering: .relaxed)
        return false
    }

    /// Counts an admitted connection out.
    public func leave() { open.subtract(1, ordering: .relaxed) }

    /// Counts `channel` in until it closes, and keeps it for ``quiesceAll()`` and
    /// ``closeAll()``; false, counting nothing, when the server already serves ``limit``.
    public func admit(_ channel: any Channel) -> Bool {
        guard admit() else { return false }
        let id = ObjectIdentifier(channel)
        channels.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { [self] _ in
            channels.withLock { _ = $0.removeValue(forKey: id) }
            leave()
        }
        return true
    }

    /// Asks every channel admitted with ``admit(_:)`` to wind down gracefully
    /// (`ChannelShouldQuiesceEvent`): finish what is in flight, take nothing new, close.
    public func quiesceAll() {
        for channel in channels.withLock({ Array($0.values) }) {
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }

    /// Closes every channel admitted with ``admit(_:)``, and waits for each to close.
    public func closeAll() async {
        for channel in channels.withLock({ Array($0.values) }) { try? await channel.close() }
    }

    /// The connections a server that answers the ones over ``limit`` before closing
    /// them (the REST API) may have accepted before it stops accepting: the limit, plus
    /// room for the ones being turned away, so a flood still gets answers without the
    /// server running out of file descriptors.
    public var acceptLimit: Int { Self.acceptLimit(for: limit) }

    /// The accept limit of a server serving `limit` connections at once.
    public static func acceptLimit(for limit: Int) -> Int { limit + max(64, limit / 8) }

    /// The queue of connections the kernel completes before the server accepts them, on
    /// both APIs' listeners: as long as Go's listeners ask for (etcd's, the kernel's
    /// `somaxconn`, which caps it). A burst of connects while the event loops are busy
    /// then waits its turn; with NIO's 128 the kernel dropped the excess SYNs, and each
    /// dropped client waited out its SYN retries (1 s, 3 s, 7 s, …) before getting in.
    /// The cap still turns away what is over ``limit`` once accepted.
    public static let listenBacklog = 4096
}
