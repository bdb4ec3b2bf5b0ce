import Foundation
import Synchronization

/// Capacity units computed from the item sizes actually read and written, by DynamoDB's
/// documented rules — for endpoints that report no `ConsumedCapacity` or report made-up
/// numbers (moto reports a constant per call).
///
/// Rules applied: a read is 1 RCU per 4 KB (strongly consistent) or 0.5 (eventually
/// consistent), per item for `GetItem`/`BatchGetItem` and per total for a `Query`, at
/// least one unit; a missing item still costs one unit. A write is 1 WCU per 1 KB of the
/// item; inside `TransactWriteItems` 2 WCU per 1 KB. Writes to local secondary indexes
/// are added: 1 KB per `byKey` entry (keys only) and the item's size for `byExpiry`.
/// Deletes are counted at 1 KB (the deleted item's size is not known to the client).
public final class CapacityEstimate: Sendable {
    /// Computed units of one operation name.
    public struct Units: Sendable, Hashable {
        /// Read capacity units.
        public var read = 0.0
        /// Write capacity units.
        public var write = 0.0
    }

    private let totals = Mutex<[String: Units]>([:])

    /// Creates empty totals.
    public init() {}

    /// Adds units to `operation`.
    public func record(_ operation: String, read: Double = 0, write: Double = 0) {
        totals.withLock { totals in
            totals[operation, default: Units()].read += read
            totals[operation, default: Units()].write += write
        }
    }

    /// Totals per operation.
    public func snapshot() -> [String: Units] { totals.withLock { $0 } }

    /// Clears the totals.
    public func reset() { totals.withLock { $0 = [:] } }

    static func readUnits(bytes: Int, consistent: Bool) -> Double {
        Double(max(1, (bytes + 4095) / 4096)) * (consistent ? 1 : 0.5)
    }

    static func writeUnits(bytes: Int) -> Double {
        Double(max(1, (bytes + 1023) / 1024))
    }

    /// Units of one write action inside a transaction, with its index entries.
    static func transactionalWriteUnits(_ action: WriteAction) -> Double {
        switch action {
        case .put(let item, _):
            var units = 2 * writeUnits(bytes: item.estimatedSize)
            if item[.lsk] != nil { units += 2 }
            if item[.expiresAt] != nil { units += 2 * writeUnits(bytes: item.estimatedSize) }
            return units
        case .delete: return 2
        case .check: return 2 * 0.5
        // Billed on the item's size after the update; the small marks of a staged change
        // are taken as one unit.
        case .update: return 2
        }
    }
}
