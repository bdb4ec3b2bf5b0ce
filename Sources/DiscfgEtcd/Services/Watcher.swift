import DiscfgCore
import Foundation
import GRPCCore
import Synchronization

/// One watcher of a stream.
struct Watcher: Sendable {
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
            try? await cancel(reason: reason(error))
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
            var sent = start.previous
            if start <= info.revision {
                // History first, read from the store and sent packed, as etcd catches a
                // watcher up; then the watch goes on from what was sent.
                do {
                    try await catchUp(after: &sent, range: range, since: info.revision)
                } catch let error as DiscfgError where error.code == .compacted {
                    try await cancelCompacted(try await backend.store.configInfo(backend.config).compactedRevision)
                    return
                }
            }
            let stream = await backend.store.watch(backend.config, scope: .prefix(.root), from: sent.next)
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
                        try await cancel(reason: reason(ending))
                    }
                    return
                }
            }
        } catch is CancellationError {
        } catch {
            try? await cancel(reason: reason(error))
        }
    }

    /// The cancel reason a client reads for `error`: the failure policy's answer, in
    /// etcd's words (never a Swift error's text).
    private func reason(_ error: any Error) -> String {
        backend.calls.status(for: error).message
    }

    /// Sends `events` (in revision order, all after `sent`), as filtered, and moves `sent`
    /// past them. With `lastMayBePartial`, the last revision may still be arriving and is
    /// read whole from the store (a page never splits a revision).
    ///
    /// As etcd's: the revisions a watch catches up on (history up to `since`, when the
    /// watch began) go out packed, as many whole revisions in one response as fit one
    /// answer's budget, so a client reading one response from a past revision gets the
    /// history it asked for (python-etcd3's `watch_once_response`); a revision made since
    /// goes out in a response of its own. One revision is never split across responses
    /// but when it alone passes the budget: then in several, marked `fragment` (but the
    /// last) for a client that asked for fragments, as etcd fragments them.
    /// - Parameter since: the config's revision when the watch began (the header's
    ///   revision for events replayed from history, as etcd's).
    private func send(_ events: [Event], after sent: inout Revision, range: KeyRange, since: Revision, lastMayBePartial: Bool) async throws {
        var packed = Packed()
        try await send(events, after: &sent, range: range, since: since, lastMayBePartial: lastMayBePartial, packing: &packed)
        try await flush(&packed, at: since)
    }

    /// History's events not sent yet, to go out in one response.
    private struct Packed {
        var events: [Event] = []
        var bytes = 0
    }

    /// Sends what `packed` holds, if anything, in one response with its header at `since`.
    private func flush(_ packed: inout Packed, at since: Revision) async throws {
        guard !packed.events.isEmpty else { return }
        try await respond(packed.events, at: since)
        packed = Packed()
    }

    /// ``send(_:after:range:since:lastMayBePartial:)``, leaving in `packed` the history
    /// that may go out with what comes next (the next page of a catch-up).
    private func send(
        _ events: [Event], after sent: inout Revision, range: KeyRange, since: Revision, lastMayBePartial: Bool, packing packed: inout Packed
    ) async throws {
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
            let bytes = EtcdWatchService.bytes(kept, prevKv: create.prevKv)
            if revision <= since, bytes <= EtcdAnswer.maxBytes {
                if packed.bytes + bytes > EtcdAnswer.maxBytes { try await flush(&packed, at: since) }
                packed.events += kept
                packed.bytes += bytes
                continue
            }
            try await flush(&packed, at: since)
            let fragments = EtcdWatchService.fragments(kept, prevKv: create.prevKv)
            for (number, fragment) in fragments.enumerated() {
                try await respond(fragment, at: max(revision, since), fragment: create.fragment && number < fragments.count - 1)
            }
        }
    }

    /// Sends one response of `events`, its header at `revision`.
    private func respond(_ events: [Event], at revision: Revision, fragment: Bool = false) async throws {
        var message = Etcdserverpb_WatchResponse()
        message.header = identity.header(revision)
        message.watchID = id
        message.events = events.map(etcdEvent)
        message.fragment = fragment
        try await writer.send(message)
    }

    /// Sends every event after `sent` that history holds now, a page at a time, so a
    /// watcher that fell behind holds one page, not the whole gap.
    private func catchUp(after sent: inout Revision, range: KeyRange, since: Revision) async throws {
        var packed = Packed()
        while true {
            let page = try await backend.store.events(in: backend.config, scope: .prefix(.root), from: sent.next, limit: Limits.maxPageSize)
            let events = page.events.filter { range.contains($0.key) && EtcdKeys.bytes($0.key.path) != nil }
            try await send(events, after: &sent, range: range, since: since, lastMayBePartial: false, packing: &packed)
            if page.through > sent { sent = page.through }
            guard page.hasMore else { break }
        }
        try await flush(&packed, at: since)
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
