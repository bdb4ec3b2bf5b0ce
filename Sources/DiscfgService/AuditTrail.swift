import Foundation
import ServiceLifecycle
import Synchronization

/// Where every face hands its audit lines (``AuditRecord``, made by ``AuditNote``): the
/// one sink of the audit log, whatever it writes to (a file, standard error, a logger).
///
/// A line is either noted, to be written in a batch off the request's path (``note(_:)``:
/// an append under a lock; the lines are formatted and handed on by ``flush()``, every
/// ``flushInterval`` while ``AuditTrailService`` runs and once more when it stops), or
/// written at once (``write(_:)``), where a batch might never be written (a Lambda
/// function frozen after its invocation) or a face keeps batches of its own (the event
/// loops' answers, flushed with their metrics).
///
/// ```swift
/// let trail = AuditTrail { lines in sink.append(bytes: lines, urgent: false) }
/// trail.note(record)
/// ServiceGroup(services: [server, AuditTrailService(trail: trail)], ...)
/// ```
public final class AuditTrail: Sendable {
    /// The longest a noted line waits to be written.
    public static let flushInterval: Duration = .milliseconds(100)

    /// Takes lines, each ending in a newline, to write where the audit log goes.
    private let output: @Sendable ([UInt8]) -> Void
    /// Appends a record's line, with its newline.
    private let render: @Sendable (AuditRecord, inout [UInt8]) -> Void
    private let records = Mutex<[AuditRecord]>([])

    /// A trail handing its lines to `write`, each made by `render` (the record's JSON
    /// unless told otherwise).
    public init(
        render: @escaping @Sendable (AuditRecord, inout [UInt8]) -> Void = { record, line in record.append(to: &line) },
        write: @escaping @Sendable ([UInt8]) -> Void
    ) {
        self.render = render
        self.output = write
    }

    /// Notes one line, to be written by the next ``flush()``.
    public func note(_ record: AuditRecord) {
        records.withLock { $0.append(record) }
    }

    /// Writes one line now.
    public func write(_ record: AuditRecord) {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        render(record, &line)
        output(line)
    }

    /// Writes `records`' lines now, in one write, in their order.
    public func write(_ records: [AuditRecord]) {
        guard !records.isEmpty else { return }
        var lines: [UInt8] = []
        lines.reserveCapacity(records.count * 256)
        for record in records { render(record, &lines) }
        output(lines)
    }

    /// Formats and writes every line noted so far, in the order they were noted.
    public func flush() {
        let noted = records.withLock { records in
            defer { records.removeAll(keepingCapacity: true) }
            return records
        }
        write(noted)
    }
}

/// Flushes an ``AuditTrail`` every ``AuditTrail/flushInterval`` while the server runs, and
/// once more when it stops.
public struct AuditTrailService: Service {
    /// The trail flushed.
    public let trail: AuditTrail

    /// A service flushing `trail`.
    public init(trail: AuditTrail) {
        self.trail = trail
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: AuditTrail.flushInterval)
                trail.flush()
            }
        }
        trail.flush()
    }
}
