import DiscfgCore
import DiscfgService
import DiscfgWire
import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle

extension ConfigAPI {
    /// `GET watch?key=|prefix=&fromRevision=&timeout=`: a long poll, or with
    /// `Accept: text/event-stream` a Server-Sent Events stream whose event ids are
    /// revisions (`R.P` for the later events of a transaction, ``ResumePoint``), so
    /// `Last-Event-ID` resumes exactly after the last event seen.
    func watch(_ request: Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let scope: WatchScope = if let key = request.query("key") {
            .key(try Key(key))
        } else {
            .prefix(try KeyPrefix(request.query("prefix") ?? "/"))
        }
        let target: Action.Target = switch scope {
        case .key(let key): .key(key)
        case .prefix(let prefix): .prefix(prefix)
        }
        return try await perform(Action(.watch, on: config, reaching: target)) {
            try await watch(request, context, config: config, scope: scope, caller: perform.caller)
        }
    }

    /// A watch the caller may make: its stream or its long poll.
    private func watch(_ request: Request, _ context: some DiscfgRequestContext, config: ConfigName, scope: WatchScope, caller: Caller) async throws -> Response {
        // fromRevision wins over Last-Event-ID; both are checked.
        let lastEventID: ResumePoint? = try request.headers[.lastEventID].map { (text: String) throws -> ResumePoint in
            guard let point = ResumePoint(eventID: text.trimmingCharacters(in: .whitespaces)) else {
                throw DiscfgError.invalid(
                    "Last-Event-ID",
                    "Last-Event-ID \"\(String(text.prefix(40)).debugEscaped)\" is not an event id of this stream: a revision from 0 to \(Revision.max), optionally followed by . and a position (12.3)"
                )
            }
            return point
        }
        let fromRevision = try request.revision("fromRevision")
        let resume = fromRevision.map { ResumePoint(from: $0) } ?? lastEventID
        let from = resume?.revision
        // Every parameter is read whichever way the watch goes, so none is ignored unread.
        let heartbeat = try request.number(Self.heartbeatField).map { Duration.seconds($0) } ?? options.heartbeat
        let timeout = try request.number(Self.pollTimeoutField).map { Duration.seconds($0) } ?? options.defaultPollTimeout
        let limit = try request.number(.pageSize).map { Int($0) } ?? 500
        let maxBytes = try pageBytes(request)
        let start: Revision
        if let from { start = from } else { start = try await store.configInfo(config).revision.next }
        if request.headers[.accept]?.contains("text/event-stream") == true {
            guard context.supportsStreaming else {
                return EventStream.unsupported(
                    action: "watch", instead: "long-poll instead: drop 'Accept: text/event-stream' and repeat GET …/watch?fromRevision=N"
                )
            }
            // Fail before the stream starts when the start revision is already gone.
            _ = try await store.events(in: config, scope: scope, from: start, limit: 1)
            guard watches.acquire() else { return watches.refusal() }
            return serverSentEvents(config: config, scope: scope, resume: resume ?? ResumePoint(from: start), heartbeat: heartbeat, caller: caller)
        }
        var wait = min(timeout, options.maxPollTimeout)
        if let deadline = context.deadline {
            // Stop waiting well before the transport gives up: reading the events found
            // still takes a store round trip, which a busy store can make slow.
            wait = max(.zero, min(wait, deadline - .now - .seconds(2)))
        }
        guard watches.acquire() else { return watches.refusal() }
        defer { watches.release() }
        return try await longPoll(config: config, scope: scope, from: start, timeout: wait, limit: limit, maxBytes: maxBytes, caller: caller)
    }

    /// Seconds between heartbeats of an idle stream.
    static let heartbeatField = NumberField("heartbeat", 1...3600)

    /// Seconds a long poll may wait; the server waits at most ``Options/maxPollTimeout``.
    static let pollTimeoutField = NumberField("timeout", 0...3600)

    /// Waits for the first event for at most `timeout`; a caller whose token is revoked
    /// meanwhile is refused (401) instead of answered.
    private func longPoll(config: ConfigName, scope: WatchScope, from: Revision, timeout: Duration, limit: Int, maxBytes: Int, caller: Caller) async throws -> Response {
        var batch = try await store.events(in: config, scope: scope, from: from, limit: limit, maxBytes: maxBytes)
        if batch.events.isEmpty {
            let stream = await store.watch(config, scope: scope, from: from)
            let first = try await withThrowingTaskGroup(of: Event?.self) { group in
                group.addTask {
                    var iterator = stream.makeAsyncIterator()
                    return try await iterator.next()
                }
                group.addTask {
                    // Wait out the timeout, or less when the server shuts down.
                    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: timeout) }
                    return nil
                }
                if authenticator.admissionMayEnd(caller) {
                    group.addTask { [authenticator] in
                        if let refusal = await authenticator.endOfAdmission(caller) { throw refusal }
                        return nil
                    }
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            if let first {
                batch = try await store.events(in: config, scope: scope, from: first.revision, limit: limit, maxBytes: maxBytes)
            } else {
                batch = try await store.events(in: config, scope: scope, from: from, limit: limit, maxBytes: maxBytes)
            }
        }
        var envelope = Envelope(action: "watch")
        envelope.config = config.rawValue
        envelope.events = batch.events.map(EventDocument.init)
        envelope.revision = batch.through
        // Set when more events can be read right away (the page ended by count or bytes).
        envelope.cursor = batch.hasMore ? String(batch.through.rawValue) : nil
        return APIResponse.json(envelope)
    }

    /// The stream: each event as its message, with its resume point as its id. Holds one of
    /// ``watches`` until it ends; a reader that falls more than
    /// ``Options/streamBacklogBytes`` behind is cut off with the id to resume from
    /// (``EventStream``).
    private func serverSentEvents(config: ConfigName, scope: WatchScope, resume: ResumePoint, heartbeat: Duration, caller: Caller) -> Response {
        let from = resume.revision
        let store = store
        let stream = EventStream(
            action: "watch", opening: "watching \(scope) in \(config) from revision \(from)", heartbeat: heartbeat,
            backlogBytes: options.streamBacklogBytes, startID: resume.eventID ?? from.previous.description,
            caller: caller, authenticator: authenticator, slots: watches
        )
        return stream.response { sink in
            var replay = resume.replay()
            for try await event in await store.watch(config, scope: scope, from: from) where replay.admit(event) {
                let data = String(decoding: EnvelopeJSON.bytes(EventDocument(event)), as: UTF8.self)
                let id = replay.point.eventID ?? event.revision.description
                guard sink.send(EventStream.Message(id: id, event: event.kind.rawValue, data: data)) else { return }
            }
        }
    }
}

extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
