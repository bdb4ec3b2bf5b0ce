import DiscfgCore
import DiscfgService
import Foundation
import GRPCCore
import Synchronization

/// etcd's `Watch` service: one stream carries many watchers, each a discfg watch of the
/// config filtered to its range. The events of one revision (one transaction) go out in
/// one response, as etcd sends them.
struct EtcdWatchService: Etcdserverpb_Watch.SimpleServiceProtocol {
    let backend: EtcdBackend
    let identity: EtcdIdentity
    /// Bytes of events a watch stream's watchers hold together for a client that reads
    /// slower than the store changes; past them a watcher lets go of what it holds and
    /// catches up from history once the client reads again, as etcd's unsynced watchers do.
    var backlogBytes = 1 << 20
    /// Watchers open at once over all streams; a create past them is refused.
    let openWatchers: Budget
    /// Watchers open on each connection, by its peer's address.
    let byConnection = ConnectionWatchers()
    /// Whether streams may run as an authenticated caller (``EtcdCaller/current``), whose
    /// scopes each create is checked against.
    var authenticates = false

    /// The most watchers one stream holds; a create past them is refused with a reason.
    /// etcd has no such cap; clients open one stream per context, and a thousand
    /// watchers of one context is past what any client seen opens.
    static let maxWatchersPerStream = 1000
    /// The share of the server's watchers (``openWatchers``) one connection's streams may
    /// hold together: a quarter, so one client (or attacker) cannot take them all.
    static let connectionShare = 4
    /// Watchers a connection may always hold, however small its share (or all of the
    /// server's, when it has fewer): a fair share matters on a busy server, not on one
    /// told to hold a handful.
    static let minWatchersPerConnection = 100

    /// The most watchers one connection holds: 250 of the default 1,000.
    var maxWatchersPerConnection: Int {
        max(openWatchers.limit / Self.connectionShare, min(openWatchers.limit, Self.minWatchersPerConnection))
    }

    func watch(
        request: RPCAsyncSequence<Etcdserverpb_WatchRequest, any Error>,
        response: RPCWriter<Etcdserverpb_WatchResponse>,
        context: ServerContext
    ) async throws {
        let writer = WatchResponses(response)
        var watchers: [Int64: Task<Void, Never>] = [:]
        var nextID: Int64 = 0
        // What this stream's watchers hold for a slow client, together.
        let backlog = Budget(limit: backlogBytes)
        let connection = context.remotePeer
        let perConnection = maxWatchersPerConnection
        defer {
            for task in watchers.values { task.cancel() }
            openWatchers.give(watchers.count)
            byConnection.give(watchers.count, of: connection)
        }
        let caller = EtcdCaller.caller(authenticates: authenticates)
        for try await message in request {
            switch message.requestUnion {
            case .createRequest(let create)?:
                // The gate's decision, made as each watch is created (the stream outlives
                // any one step the service could run it around).
                let action = Action(.watch, on: backend.config, reaching: EtcdKeys.target(key: create.key, rangeEnd: create.rangeEnd))
                if (try? Pipeline.admit(action, by: caller)) == nil {
                    // As etcd refuses a watch outside the user's permissions: created and
                    // canceled at once, with no watcher id.
                    var refused = Etcdserverpb_WatchResponse()
                    refused.header = identity.header(try await backend.currentRevision())
                    refused.watchID = -1
                    refused.created = true
                    refused.canceled = true
                    refused.cancelReason = EtcdAuthError.permissionDenied.message
                    try await writer.send(refused)
                    continue
                }
                var id = create.watchID
                if id == 0 {
                    while watchers[nextID] != nil { nextID += 1 }
                    id = nextID
                    nextID += 1
                }
                let refusal = refusal(id: id, open: watchers, connection: connection, perConnection: perConnection)
                if let refusal {
                    var refused = Etcdserverpb_WatchResponse()
                    refused.header = identity.header(try await backend.currentRevision())
                    refused.watchID = id
                    refused.created = true
                    refused.canceled = true
                    refused.cancelReason = refusal
                    try await writer.send(refused)
                    continue
                }
                let watcher = Watcher(id: id, create: create, backend: backend, identity: identity, writer: writer, backlogBytes: backlogBytes, backlog: backlog)
                // `created` goes out here, in the order of the creates: etcd clients
                // match each `created` to their oldest pending create.
                guard let info = await watcher.start() else {
                    openWatchers.give(1)
                    byConnection.give(1, of: connection)
                    continue
                }
                watchers[id] = Task { await watcher.run(from: info) }
            case .cancelRequest(let cancel)?:
                guard let task = watchers.removeValue(forKey: cancel.watchID) else { continue }
                task.cancel()
                openWatchers.give(1)
                byConnection.give(1, of: connection)
                var canceled = Etcdserverpb_WatchResponse()
                canceled.header = identity.header(try await backend.currentRevision())
                canceled.watchID = cancel.watchID
                canceled.canceled = true
                try await writer.send(canceled)
            case .progressRequest?:
                var progress = Etcdserverpb_WatchResponse()
                progress.header = identity.header(try await backend.currentRevision())
                progress.watchID = -1
                try await writer.send(progress)
            case nil:
                continue
            }
        }
    }
}

extension EtcdWatchService {
    /// Why a create of watcher `id` is refused, or nil, having then counted it against
    /// the stream's, the connection's and the server's caps.
    fileprivate func refusal(id: Int64, open watchers: [Int64: Task<Void, Never>], connection: String, perConnection: Int) -> String? {
        if watchers[id] != nil { return "etcdserver: duplicate watch ID" }
        if watchers.count >= Self.maxWatchersPerStream {
            return "etcdserver: too many watchers on this stream (\(Self.maxWatchersPerStream)); cancel some first, or watch on another stream"
        }
        if !openWatchers.take(1) {
            return "etcdserver: too many watchers open on this server (\(openWatchers.limit)); cancel some first"
        }
        if !byConnection.take(of: connection, limit: perConnection) {
            openWatchers.give(1)
            return "etcdserver: too many watchers on this connection (\(perConnection) of the server's \(openWatchers.limit)); cancel some first"
        }
        return nil
    }
}

extension EtcdWatchService {
    /// Events cut into runs of at most ``EtcdAnswer/maxBytes`` each (an event larger
    /// alone goes alone).
    static func fragments(_ events: [Event], prevKv: Bool) -> [[Event]] {
        var runs: [[Event]] = [[]]
        var bytes = 0
        for event in events {
            let size = Self.bytes(event, prevKv: prevKv)
            if !runs[runs.count - 1].isEmpty, bytes + size > EtcdAnswer.maxBytes {
                runs.append([])
                bytes = 0
            }
            runs[runs.count - 1].append(event)
            bytes += size
        }
        return runs
    }

    /// What `events` weigh in an answer, as ``fragments(_:prevKv:)`` counts them.
    static func bytes(_ events: [Event], prevKv: Bool) -> Int {
        events.reduce(0) { $0 + bytes($1, prevKv: prevKv) }
    }

    private static func bytes(_ event: Event, prevKv: Bool) -> Int {
        let current = (event.item ?? event.prevItem).map { EtcdAnswer.size($0, keysOnly: false) } ?? EtcdAnswer.bytesPerKeyValue
        let previous = prevKv ? (event.prevItem.map { EtcdAnswer.size($0, keysOnly: false) } ?? 0) : 0
        return current + previous
    }
}

/// The stream's writer, shared by its watchers: one response at a time.
actor WatchResponses {
    private let writer: RPCWriter<Etcdserverpb_WatchResponse>

    init(_ writer: RPCWriter<Etcdserverpb_WatchResponse>) { self.writer = writer }

    func send(_ response: Etcdserverpb_WatchResponse) async throws { try await writer.write(response) }
}

/// The watchers each connection holds, by its peer's address, within a limit each.
final class ConnectionWatchers: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts one more watcher of `connection`; false, counting nothing, at `limit`.
    func take(of connection: String, limit: Int) -> Bool {
        counts.withLock { counts in
            guard counts[connection, default: 0] < limit else { return false }
            counts[connection, default: 0] += 1
            return true
        }
    }

    /// Counts `count` fewer watchers of `connection`.
    func give(_ count: Int, of connection: String) {
        guard count > 0 else { return }
        counts.withLock { counts in
            let left = counts[connection, default: 0] - count
            counts[connection] = left > 0 ? left : nil
        }
    }
}
