import DiscfgCore
import DiscfgService
import DiscfgNetwork
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Writes one audit line (``AuditRecord``) per request answered by the router, and counts
/// it in the metrics.
///
/// What only the route learns — who the caller was admitted as, the config and keys, the
/// revision of the change, the error of a refusal — it notes in ``AuditNote/current``,
/// which this middleware binds around the request.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: APIMetrics
    /// Where the lines go; nil to write them through the request's logger.
    let sink: LogSink?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let time = AuditRecord.now()
        let note = AuditNote()
        let response: Response
        do {
            response = try await note.noting { try await next(request, context) }
        } catch {
            record(request, context, note, status: (error as? any HTTPResponseError)?.status.code ?? 500, time: time, start: start)
            throw error
        }
        record(request, context, note, status: response.status.code, time: time, start: start)
        return response
    }

    private func record(_ request: Request, _ context: Context, _ note: AuditNote, status: Int, time: (seconds: Int, nanoseconds: Int), start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let route = context.endpointPath ?? "unmatched"
        metrics.recordRequest(route: route, method: request.method.rawValue, status: status, seconds: elapsed.seconds)
        var record = note.record(api: "rest", route: route, time: time, elapsed: elapsed)
        record.method = request.method.rawValue
        record.path = request.uri.path
        record.status = status
        AccessLog.write(record, to: sink, logger: context.logger)
    }
}

/// What a route learns of its request for the request's audit line: who it admitted,
/// the config and keys it names (a transaction's, from its body), the error it answered,
/// the revision of its change.
///
/// Bound by whoever writes the line (``AccessLogMiddleware``, the Lambda function) for the
/// request's task; filled by ``ConfigAPI/respond(_:_:_:)``, the error envelopes and
/// ``RequestDeadlines/commit(_:)``; nil where no line is being written.
public final class AuditNote: Sendable {
    /// The note of the request the current task answers.
    @TaskLocal static var current: AuditNote?

    struct Fields {
        /// The route as declared (``Endpoint/path``).
        var route: String?
        var principal: Principal?
        var config: String?
        var key: String?
        var prefix: String?
        var transaction: AuditRecord.TransactionNames?
        var error: DiscfgError.Code?
        var revision: Revision?
    }

    private let fields = Mutex(Fields())
    /// The action the pipeline ran the request as (``DiscfgService/ActionNote``).
    private let action = ActionNote()

    /// An empty note.
    public init() {}

    /// Runs `operation`, the answering of one request, with this note as the one its
    /// route fills, and its action note as the one the pipeline fills.
    public func noting<T>(_ operation: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(self) { try await action.noting(operation) }
    }

    /// Notes the caller the transport authenticated, for a request refused before the
    /// route saw it.
    public func note(principal: Principal) {
        update { $0.principal = principal }
    }

    /// Changes what is noted.
    func update(_ change: (inout Fields) -> Void) {
        fields.withLock { change(&$0) }
    }

    /// The record of the request, with what was noted; `route` names it when no
    /// declared route did (the health check, the console's files, a path no route takes).
    public func record(api: String, route: String, time: (seconds: Int, nanoseconds: Int), elapsed: Duration) -> AuditRecord {
        let noted = fields.withLock { $0 }
        var record = AuditRecord(api: api, route: noted.route ?? route, time: time, elapsed: elapsed)
        record.principal = noted.principal
        record.config = noted.config
        record.key = noted.key
        record.prefix = noted.prefix
        record.transaction = noted.transaction
        record.error = noted.error?.rawValue
        record.revision = noted.revision.map { Int64(clamping: $0.rawValue) }
        record.action = action.kind?.rawValue
        return record
    }
}

/// What a store call returns that says which revision its change made, for the audit
/// line of the request that made it (``RequestDeadlines/commit(_:)``).
protocol ChangeOutcome {
    /// The revision of the change; nil when nothing changed.
    var changeRevision: Revision? { get }
}

extension Event: ChangeOutcome {
    var changeRevision: Revision? { revision }
}

extension Array: ChangeOutcome where Element == Event {
    var changeRevision: Revision? { last?.revision }
}

extension ImportResult: ChangeOutcome {
    var changeRevision: Revision? { events.isEmpty ? nil : revision }
}

extension TransactionResult: ChangeOutcome {
    var changeRevision: Revision? { events.isEmpty ? nil : revision }
}

extension SchemaChange: ChangeOutcome {
    var changeRevision: Revision? { event.revision }
}

/// The audit lines of the key reads and writes answered on the event loops, and the
/// request metrics they count.
///
/// On the event loop a request is only noted, in a buffer of its loop's own: the lines
/// are formatted and written, and the metrics counted, by ``flush()`` on another thread,
/// every ``flushInterval`` and before each scrape. The router's requests are written as
/// they are answered (``AccessLogMiddleware``), in the same form.
final class AccessLog: Sendable {
    /// The longest a key read waits to be logged and counted.
    static let flushInterval: Duration = .milliseconds(100)

    /// What is noted of a key read or write answered on an event loop.
    struct Record {
        var kind: APIMetrics.LoopAnswer
        var path: String
        var config: String
        var key: String
        var principal: Principal
        var status: Int
        var error: DiscfgError.Code?
        var revision: Revision?
        /// When its head arrived, on the event loop's clock.
        var start: NIODeadline
        var elapsed: Duration
    }

    /// The records of one event loop's connections.
    final class Buffer: Sendable {
        fileprivate let records = Mutex<[Record]>([])

        func append(_ record: Record) {
            records.withLock { $0.append(record) }
        }
    }

    let metrics: APIMetrics
    let logger: Logger
    /// Where the lines go; nil to write them through `logger`.
    let sink: LogSink?
    let route: String
    private let buffers = Mutex<[ObjectIdentifier: Buffer]>([:])

    init(metrics: APIMetrics, logger: Logger, sink: LogSink?, route: String) {
        self.metrics = metrics
        self.logger = logger
        self.sink = sink
        self.route = route
    }

    /// The buffer of `eventLoop`'s connections.
    func buffer(for eventLoop: any EventLoop) -> Buffer {
        buffers.withLock { buffers in
            if let buffer = buffers[ObjectIdentifier(eventLoop)] { return buffer }
            let buffer = Buffer()
            buffers[ObjectIdentifier(eventLoop)] = buffer
            return buffer
        }
    }

    /// Logs and counts every record noted so far.
    func flush() {
        for buffer in buffers.withLock({ Array($0.values) }) {
            let records = buffer.records.withLock { records in
                defer { records.removeAll(keepingCapacity: true) }
                return records
            }
            guard !records.isEmpty else { continue }
            for kind in [APIMetrics.LoopAnswer.viewRead, .write] {
                metrics.recordRequests(route: route, kind, records.filter { $0.kind == kind }.map { ($0.status, $0.elapsed.seconds) })
            }
            // Lines a silenced logger would drop are not made.
            guard sink != nil || logger.logLevel <= .info else { continue }
            // The wall clock of each record's start, from the event loop's clock.
            let now = AuditRecord.now()
            let uptime = NIODeadline.now().uptimeNanoseconds
            let methods = [APIMetrics.LoopAnswer.viewRead, .write].map { kind in
                String(decoding: UnsafeBufferPointer(start: kind.method.utf8Start, count: kind.method.utf8CodeUnitCount), as: UTF8.self)
            }
            var lines: [UInt8] = []
            lines.reserveCapacity(records.count * 256)
            for record in records {
                let ago = Int(uptime &- record.start.uptimeNanoseconds)
                let nanoseconds = now.seconds * 1_000_000_000 + now.nanoseconds - ago
                var line = AuditRecord(api: "rest", route: Endpoint.getKey.path, time: (nanoseconds / 1_000_000_000, nanoseconds % 1_000_000_000), elapsed: record.elapsed)
                line.principal = record.principal
                line.method = methods[record.kind == .viewRead ? 0 : 1]
                line.path = record.path
                line.config = record.config
                line.key = record.key
                line.status = record.status
                line.error = record.error?.rawValue
                line.revision = record.revision.map { Int64(clamping: $0.rawValue) }
                // The action the event loop ran through the pipeline (``KeyReads``).
                line.action = record.kind == .viewRead ? Action.Kind.get.rawValue : Action.Kind.set.rawValue
                if sink == nil {
                    Self.write(line, to: nil, logger: logger)
                } else {
                    line.append(to: &lines)
                }
            }
            sink?.append(bytes: lines, urgent: false)
        }
    }

    /// Writes one line now: appended to `sink`, else logged through `logger` at info.
    static func write(_ record: AuditRecord, to sink: LogSink?, logger: Logger) {
        if let sink {
            var line: [UInt8] = []
            line.reserveCapacity(256)
            record.append(to: &line)
            sink.append(bytes: line, urgent: false)
        } else if logger.logLevel <= .info {
            logger.info("\(record.line.dropLast())")
        }
    }
}

/// Flushes the access log of the key reads answered on the event loops, every
/// ``AccessLog/flushInterval`` and once more when the server stops.
struct AccessLogService: Service {
    let log: AccessLog

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: AccessLog.flushInterval)
                log.flush()
            }
        }
        log.flush()
    }
}
