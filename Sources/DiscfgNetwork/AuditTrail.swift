import Foundation
import ServiceLifecycle
import Synchronization

/// Audit lines (``AuditRecord``) noted as calls end and written in batches: noting is an
/// append under a lock, and the lines are formatted and handed to ``write`` by
/// ``flush()``, every ``flushInterval`` while ``AuditTrailService`` runs and once more
/// when it stops.
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
    public let write: @Sendable ([UInt8]) -> Void
    private let records = Mutex<[AuditRecord]>([])

    /// A trail handing its lines to `write`.
    public init(write: @escaping @Sendable ([UInt8]) -> Void) {
        self.write = write
    }

    /// Notes one line, to be written by the next ``flush()``.
    public func note(_ record: AuditRecord) {
        records.withLock { $0.append(record) }
    }

    /// Formats and writes every line noted so far, in the order they were noted.
    public func flush() {
        let noted = records.withLock { records in
            defer { records.removeAll(keepingCapacity: true) }
            return records
        }
        guard !noted.isEmpty else { return }
        var lines: [UInt8] = []
        lines.reserveCapacity(noted.count * 256)
        for record in noted { record.append(to: &lines) }
        write(lines)
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
