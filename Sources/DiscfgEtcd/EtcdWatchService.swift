import DiscfgCore
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
        for try await message in request {
            switch message.requestUnion {
            case .createRequest(let create)?:
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
            let current = (event.item ?? event.prevItem).map { EtcdAnswer.size($0, keysOnly: false) } ?? EtcdAnswer.bytesPerKeyValue
            let previous = prevKv ? (event.prevItem.map { EtcdAnswer.size($0, keysOnly: false) } ?? 0) : 0
            let size = current + previous
            if !runs[runs.count - 1].isEmpty, bytes + size > EtcdAnswer.maxBytes {
                runs.append([])
                bytes = 0
            }
            runs[runs.count - 1].append(event)
            bytes += size
        }
        return runs
    }
}

/// The stream's writer, shared by its watchers: one response at a time.
actor WatchResponses {
    private let writer: RPCWriter<Etcdserverpb_WatchResponse>

    init(_ writer: RPCWriter<Etcdserverpb_WatchResponse>) { self.writer = writer }

    func send(_ response: Etcdserverpb_WatchResponse) async throws { try await writer.write(response) }
}

/// One watcher of a stream.
private struct Watcher: Sendable {
    let id: Int64
    let create: Etcdserverpb_WatchCreateRequest
    let backend: EtcdBackend
    let identity: EtcdIdentity
    let writer: WatchResponses
    let backlogBytes: Int
    /// What the stream's watchers hold together, within `backlogBytes`.
    let backlog: Budget

    /// Answers the create: `created` with the config's revision now, which the watch
    /// goes on from; or, for a create that cannot be served, its cancel, and nil.
    func start() async -> ConfigInfo? {
        do {
            if create.rangeEnd.isEmpty { _ = try EtcdKeys.key(create.key) }
            let info = try await backend.store.configInfo(backend.config)
            var created = Etcdserverpb_WatchResponse()
            created.header = identity.header(info.revision)
            created.watchID = id
            created.created = true
            try await writer.send(created)
            return info
        } catch {
            try? await cancel(reason: Self.reason(error))
            return nil
        }
    }

    /// Sends the watch's events from `info`, the config as `start()` saw it, until it is
    /// cancelled or ends.
    func run(from info: ConfigInfo) async {
        do {
            let range = EtcdBackend.keyRange(key: Array(create.key), rangeEnd: Array(create.rangeEnd))
            // Without a start revision the watch begins after the revision its `created`
            // answer names, so a change made once the client heard `created` is never
            // missed.
            let start = create.startRevision > 0 ? Revision(UInt64(create.startRevision)) : info.revision.next
            if start <= info.compactedRevision {
                try await cancelCompacted(info.compactedRevision)
                return
            }
            let queue = EventQueue(maxBytes: backlogBytes, shared: backlog)
            var sent = Revision.zero
            let stream = await backend.store.watch(backend.config, scope: .prefix(.root), from: start)
            let pump = Task {
                do {
                    for try await event in stream where range.contains(event.key) && EtcdKeys.bytes(event.key.path) != nil {
                        queue.push(event)
                    }
                    queue.finish(nil)
                } catch {
                    queue.finish(error)
                }
            }
            defer { pump.cancel() }
            while !Task.isCancelled {
                guard await queue.waitForEvents() else { break }
                let taken = queue.takeAll()
                do {
                    if taken.overflowed {
                        // What the queue let go of is in history: read from there, a
                        // page at a time, until caught up with what the store has now.
                        try await catchUp(after: &sent, range: range, since: info.revision)
                    }
                    try await send(taken.events.filter { $0.revision > sent }, after: &sent, range: range, since: info.revision, lastMayBePartial: true)
                } catch let error as DiscfgError where error.code == .compacted {
                    try await cancelCompacted(try await backend.store.configInfo(backend.config).compactedRevision)
                    return
                }
                if let ending = taken.ending {
                    if let error = ending as? DiscfgError, error.code == .compacted {
                        try await cancelCompacted(try await backend.store.configInfo(backend.config).compactedRevision)
                    } else {
                        try await cancel(reason: (ending as? DiscfgError)?.message ?? "etcdserver: watch ended: \(ending)")
                    }
                    return
                }
            }
        } catch is CancellationError {
        } catch {
            try? await cancel(reason: Self.reason(error))
        }
    }

    /// The cancel reason etcd gives for `error`.
    private static func reason(_ error: any Error) -> String {
        (error as? DiscfgError).map { EtcdError.translated($0).message } ?? "etcdserver: \(error)"
    }

    /// Sends `events` (in revision order, all after `sent`) one response per revision,
    /// as filtered, and moves `sent` past them. With `lastMayBePartial`, the last
    /// revision may still be arriving and is read whole from the store (a page never
    /// splits a revision).
    /// - Parameter since: the config's revision when the watch began (the header's
    ///   revision for events replayed from history, as etcd's).
    private func send(_ events: [Event], after sent: inout Revision, range: KeyRange, since: Revision, lastMayBePartial: Bool) async throws {
        let noPut = create.filters.contains(.noput), noDelete = create.filters.contains(.nodelete)
        var index = events.startIndex
        while index < events.endIndex {
            let revision = events[index].revision
            let end = events[index...].firstIndex { $0.revision != revision } ?? events.endIndex
            var group = Array(events[index..<end])
            index = end
            if lastMayBePartial, end == events.endIndex { group = try await wholeRevision(revision, range: range) }
            sent = revision
            let kept = group.filter { $0.kind == .put ? !noPut : !noDelete }
            guard !kept.isEmpty else { continue }
            // One revision's events go out in one response, as etcd's, unless they pass
            // one answer's budget: then in several, marked `fragment` (but the last) for
            // a client that asked for fragments, as etcd fragments them.
            let fragments = EtcdWatchService.fragments(kept, prevKv: create.prevKv)
            for (number, fragment) in fragments.enumerated() {
                var message = Etcdserverpb_WatchResponse()
                message.header = identity.header(max(revision, since))
                message.watchID = id
                message.events = fragment.map(etcdEvent)
                message.fragment = create.fragment && number < fragments.count - 1
                try await writer.send(message)
            }
        }
    }


    /// Sends every event after `sent` that history holds now, a page at a time, so a
    /// watcher that fell behind holds one page, not the whole gap.
    private func catchUp(after sent: inout Revision, range: KeyRange, since: Revision) async throws {
        while true {
            let page = try await backend.store.events(in: backend.config, scope: .prefix(.root), from: sent.next, limit: Limits.maxPageSize)
            let events = page.events.filter { range.contains($0.key) && EtcdKeys.bytes($0.key.path) != nil }
            try await send(events, after: &sent, range: range, since: since, lastMayBePartial: false)
            if page.through > sent { sent = page.through }
            guard page.hasMore else { return }
        }
    }

    /// Every event of `revision` in the watched range, read from the store.
    private func wholeRevision(_ revision: Revision, range: KeyRange) async throws -> [Event] {
        let page = try await backend.store.events(in: backend.config, scope: .prefix(.root), from: revision, limit: 1, maxBytes: Limits.maxPageBytes)
        return page.events.filter { $0.revision == revision && range.contains($0.key) && EtcdKeys.bytes($0.key.path) != nil }
    }

    private func etcdEvent(_ event: Event) -> Mvccpb_Event {
        var out = Mvccpb_Event()
        switch event.kind {
        case .put:
            out.type = .put
            if let item = event.item, let kv = Mvccpb_KeyValue(item) { out.kv = kv }
        case .delete, .expire:
            out.type = .delete
            var kv = Mvccpb_KeyValue()
            kv.key = Data(EtcdKeys.bytes(event.key.path) ?? [])
            kv.modRevision = event.revision.storageValue
            out.kv = kv
        }
        if create.prevKv, let prev = event.prevItem.flatMap({ Mvccpb_KeyValue($0) }) { out.prevKv = prev }
        return out
    }

    /// etcd's answer to a watch of history it no longer holds: `compact_revision` is the
    /// oldest revision still readable, the one after discfg's `compacted` (as etcd's
    /// compaction keeps the revision it compacted to). As etcd's, its header carries no
    /// revision.
    private func cancelCompacted(_ compacted: Revision) async throws {
        var message = Etcdserverpb_WatchResponse()
        message.header = identity.header(.zero)
        message.watchID = id
        message.compactRevision = compacted.next.storageValue
        message.canceled = true
        message.cancelReason = EtcdError.compacted.message
        try await writer.send(message)
    }

    private func cancel(reason: String) async throws {
        var message = Etcdserverpb_WatchResponse()
        message.header = identity.header(try await backend.currentRevision())
        message.watchID = id
        message.canceled = true
        message.cancelReason = reason
        try await writer.send(message)
    }
}

/// Events between the watch that delivers them and the loop that sends them, at most
/// `maxBytes` of them (``PageBudget``'s measure) and no more than its stream's `shared`
/// budget has room for: past that it drops what it holds and says so, and the loop
/// reads the gap from history instead.
final class EventQueue: Sendable {
    private struct State {
        var events: [Event] = []
        var bytes = 0
        var peakBytes = 0
        var overflowed = false
        var ending: (any Error)?
        var finished = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    /// What ``takeAll()`` hands over.
    struct Taken {
        /// The events held, in order; none when ``overflowed``.
        var events: [Event]
        /// Whether events were dropped since the last take: every event after the last
        /// one sent must be read from history.
        var overflowed: Bool
        /// Why the watch ended, once it has.
        var ending: (any Error)?
    }

    private let maxBytes: Int
    /// What this queue holds counts here too, with other queues' (one watch stream's).
    private let shared: Budget?
    private let state = Mutex(State())

    init(maxBytes: Int, shared: Budget? = nil) {
        self.maxBytes = maxBytes
        self.shared = shared
    }

    deinit {
        shared?.give(state.withLock { $0.bytes })
    }

    /// The most bytes of events held at once so far.
    var peakBytes: Int { state.withLock { $0.peakBytes } }

    func push(_ event: Event) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.overflowed else { return nil }
            let size = PageBudget.size(event)
            if state.bytes + size > maxBytes || !(shared?.take(size) ?? true) {
                shared?.give(state.bytes)
                state.events = []
                state.bytes = 0
                state.overflowed = true
            } else {
                state.events.append(event)
                state.bytes += size
                state.peakBytes = max(state.peakBytes, state.bytes)
            }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    func finish(_ error: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.finished = true
            state.ending = error
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Waits until events, an overflow or the end are there; false when the queue ended
    /// with nothing left and no error to report.
    func waitForEvents() async -> Bool {
        await withTaskCancellationHandler {
            await wait()
        } onCancel: {
            finish(CancellationError())
        }
    }

    private func wait() async -> Bool {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool? in
                if !state.events.isEmpty || state.overflowed || state.ending != nil { return true }
                if state.finished { return false }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func takeAll() -> Taken {
        state.withLock { state in
            defer {
                shared?.give(state.bytes)
                state.events = []
                state.bytes = 0
                state.overflowed = false
            }
            return Taken(events: state.events, overflowed: state.overflowed, ending: state.finished ? state.ending : nil)
        }
    }
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
