import DiscfgCore
import DiscfgService
import DiscfgNetwork
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Writes one audit line per request answered by the router, and counts it in the
/// metrics.
///
/// What only the route learns — who the caller was admitted as, the config and keys, the
/// revision of the change, the error of a refusal — it notes in the request's
/// ``DiscfgService/AuditNote``, which this middleware binds around the request; the line
/// is the note's, with the route, method, path and status the router answered.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: APIMetrics
    /// Where the lines go; nil to write them through the request's logger.
    let trail: AuditTrail?

    @concurrent func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        let note = AuditNote()
        let response: Response
        do {
            response = try await note.noting { try await next(request, context) }
        } catch {
            record(request, context, note, status: (error as? any HTTPResponseError)?.status.code ?? 500)
            throw error
        }
        record(request, context, note, status: response.status.code)
        return response
    }

    private func record(_ request: Request, _ context: Context, _ note: AuditNote, status: Int) {
        let route = context.endpointPath ?? "unmatched"
        let record = note.record(api: "rest", route: route, AuditNote.Answer(method: request.method.rawValue, path: request.uri.path, status: status))
        metrics.recordRequest(route: route, method: request.method.rawValue, status: status, seconds: record.elapsed.seconds)
        if let trail {
            trail.write(record)
        } else if context.logger.logLevel <= .info {
            AuditTrail.logging(to: context.logger).write(record)
        }
    }
}

extension AuditTrail {
    /// A trail that appends its lines to `sink`, batched by the sink's writer.
    /// - Parameter urgent: whether the sink writes each line at once (a Lambda function,
    ///   which may be frozen before a batch is written).
    public convenience init(sink: LogSink, urgent: Bool = false) {
        self.init { sink.append(bytes: $0, urgent: urgent) }
    }

    /// A trail that logs each line through `logger` at info (a Lambda function's log,
    /// where each line follows its invocation's request id).
    public static func logging(to logger: Logger) -> AuditTrail {
        AuditTrail { lines in
            for line in lines.split(separator: UInt8(ascii: "\n")) {
                logger.info("\(String(decoding: line, as: UTF8.self))")
            }
        }
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
/// are made (as every face's are, ``DiscfgService/AuditRecord/init(api:route:_:_:time:elapsed:)``)
/// and handed to the audit trail, and the metrics counted, by ``flush()`` on another
/// thread, every ``flushInterval`` and before each scrape. The router's requests are
/// written as they are answered (``AccessLogMiddleware``), to the same trail.
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
    /// Where the lines go; nil for none.
    let trail: AuditTrail?
    let route: String
    private let buffers = Mutex<[ObjectIdentifier: Buffer]>([:])

    init(metrics: APIMetrics, trail: AuditTrail?, route: String) {
        self.metrics = metrics
        self.trail = trail
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
            trail?.write(Self.lines(of: records))
        }
    }

    /// The audit lines of `records`, each as the router would have noted its request: the
    /// action the event loop ran through the pipeline (``KeyReads``), a `get` or a `set`.
    private static func lines(of records: [Record]) -> [AuditRecord] {
        // The wall clock of each record's start, from the event loop's clock.
        let now = AuditRecord.now()
        let uptime = NIODeadline.now().uptimeNanoseconds
        let methods = [APIMetrics.LoopAnswer.viewRead, .write].map { kind in
            String(decoding: UnsafeBufferPointer(start: kind.method.utf8Start, count: kind.method.utf8CodeUnitCount), as: UTF8.self)
        }
        return records.map { record in
            let ago = Int(uptime &- record.start.uptimeNanoseconds)
            let nanoseconds = now.seconds * 1_000_000_000 + now.nanoseconds - ago
            let read = record.kind == .viewRead
            let fields = AuditNote.Fields(
                route: Endpoint.getKey.path, principal: record.principal, config: record.config, key: record.key,
                error: record.error, revision: record.revision, action: read ? .get : .set
            )
            let answer = AuditNote.Answer(method: methods[read ? 0 : 1], path: record.path, status: record.status)
            return AuditRecord(
                api: "rest", route: Endpoint.getKey.path, fields, answer,
                time: (nanoseconds / 1_000_000_000, nanoseconds % 1_000_000_000), elapsed: record.elapsed
            )
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
