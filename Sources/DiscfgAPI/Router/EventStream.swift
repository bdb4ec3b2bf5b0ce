import DiscfgCore
import DiscfgService
import DiscfgWire
import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle

/// A Server-Sent Events answer of the REST API, made one way for every stream: the watch
/// (``ConfigAPI/watch(_:_:_:)``) and OFREP's change stream (``ConfigAPI/flagEvents(_:_:_:)``).
///
/// A source sends messages through a ``Sink``; the stream writes them at the reader's
/// pace, and around them what every stream does alike:
/// - a `retry:` line and an opening comment, then a comment line as a heartbeat whenever
///   nothing waits to be sent;
/// - a reader that falls more than ``backlogBytes`` behind is sent what is held, then an
///   `error` event (`unavailable`) naming the `Last-Event-ID` to resume from, and the
///   stream ends;
/// - a source that fails, or a caller whose admission ends meanwhile (its token revoked),
///   ends the stream with an `error` event;
/// - a server shutting down ends it, so graceful shutdown does not wait on streams;
///   clients reconnect elsewhere with `Last-Event-ID`.
///
/// It holds one of the server's stream slots, taken by the route before it answers and
/// given back when the stream ends.
struct EventStream: Sendable {
    /// One message, whole: its `id:`, `event:` and `data:` lines and the blank line after.
    struct Message: Sendable {
        /// Its id, which the reader sends back as `Last-Event-ID`; nil for none.
        var id: String?
        var text: String

        init(id: String?, event: String, data: String) {
            self.id = id
            text = (id.map { "id: \($0)\n" } ?? "") + "event: \(event)\ndata: \(data)\n\n"
        }
    }

    /// What a source sends its messages through.
    struct Sink: Sendable {
        fileprivate let backlog: StreamBacklog
        fileprivate let continuation: AsyncStream<Item>.Continuation

        /// Queues `message` for the reader; false, queuing nothing, once the reader has
        /// fallen too far behind: the source should stop.
        func send(_ message: Message) -> Bool {
            guard backlog.admit(message.text.utf8.count) else { return false }
            continuation.yield(.message(message))
            return true
        }
    }

    fileprivate enum Item: Sendable {
        case message(Message)
        case heartbeat
        case failure(DiscfgError)
    }

    /// The envelope action of the stream's `error` events.
    var action: String
    /// The opening comment: what the stream follows, from where.
    var opening: String
    /// Time between heartbeats of an idle stream.
    var heartbeat: Duration
    /// How far, in bytes of messages, a reader may fall behind.
    var backlogBytes: Int
    /// The id to resume from when the stream is cut off before it sent a message.
    var startID: String
    var caller: Caller
    var authenticator: Authenticator
    /// The slots the route took this stream's from.
    var slots: StreamSlots

    /// The answer: `200` with the stream, whose messages `source` sends until it returns.
    func response(source: @escaping @Sendable (Sink) async throws -> Void) -> Response {
        let stream = self
        let body = ResponseBody { writer in
            defer { stream.slots.release() }
            let backlog = StreamBacklog(budget: stream.backlogBytes)
            let (items, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .unbounded)
            let messages = Task {
                do {
                    try await source(Sink(backlog: backlog, continuation: continuation))
                } catch let error as DiscfgError {
                    continuation.yield(.failure(error))
                } catch {}
                continuation.finish()
            }
            let beats = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: stream.heartbeat)
                    // A reader with messages waiting needs no heartbeat (nor more to hold).
                    if backlog.isEmpty { continuation.yield(.heartbeat) }
                }
            }
            let access = stream.authenticator.admissionMayEnd(stream.caller) ? Task {
                if let refusal = await stream.authenticator.endOfAdmission(stream.caller) {
                    continuation.yield(.failure(refusal))
                    continuation.finish()
                }
            } : nil
            let shutdown = Task { try? await gracefulShutdown(); continuation.finish() }
            defer {
                messages.cancel()
                beats.cancel()
                access?.cancel()
                shutdown.cancel()
            }
            try await writer.write(ByteBuffer(string: "retry: 1000\n: \(stream.opening)\n\n"))
            var lastSent = stream.startID
            for await item in items {
                switch item {
                case .message(let message):
                    try await writer.write(ByteBuffer(string: message.text))
                    backlog.sent(message.text.utf8.count)
                    if let id = message.id { lastSent = id }
                case .heartbeat:
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                case .failure(let error):
                    try await writer.write(ByteBuffer(string: stream.errorMessage(error, id: nil)))
                    try await writer.finish(nil)
                    return
                }
            }
            if backlog.overflowed {
                let error = DiscfgError(
                    .unavailable,
                    "this reader fell more than \(stream.backlogBytes) bytes of events behind and was cut off; reconnect with Last-Event-ID: \(lastSent) to resume after the last event sent",
                    field: "Last-Event-ID"
                )
                try await writer.write(ByteBuffer(string: stream.errorMessage(error, id: lastSent)))
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: body
        )
    }

    /// An `error` event carrying `error` in the API's envelope.
    private func errorMessage(_ error: DiscfgError, id: String?) -> String {
        let data = EnvelopeJSON.data(Envelope(action: action, error: error))
        return Message(id: id, event: "error", data: String(decoding: data, as: UTF8.self)).text
    }

    /// The `406` of a transport that cannot stream (API Gateway buffers responses), saying
    /// what to do instead.
    static func unsupported(action: String, instead: String) -> Response {
        var response = APIResponse.error(
            DiscfgError(.invalidArgument, "this endpoint cannot stream Server-Sent Events (API Gateway buffers responses); \(instead)", field: "accept"),
            action: action
        )
        response.status = .notAcceptable
        return response
    }
}
