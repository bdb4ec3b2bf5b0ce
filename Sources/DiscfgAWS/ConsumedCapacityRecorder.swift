import Foundation

/// Capacity one response reports having consumed, for a table or for the whole call.
public struct ConsumedCapacity: Sendable, Hashable {
    /// The table the units were charged to, when the service names it.
    public var tableName: String?
    /// Total units (read and write together) as the service reports them.
    public var capacityUnits: Double
    /// Read units, when the service breaks them out.
    public var readCapacityUnits: Double
    /// Write units, when the service breaks them out.
    public var writeCapacityUnits: Double

    /// Creates an entry.
    public init(tableName: String? = nil, capacityUnits: Double = 0, readCapacityUnits: Double = 0, writeCapacityUnits: Double = 0) {
        self.tableName = tableName
        self.capacityUnits = capacityUnits
        self.readCapacityUnits = readCapacityUnits
        self.writeCapacityUnits = writeCapacityUnits
    }

    /// Extracts the top-level `ConsumedCapacity` (object or array) from a JSON response body.
    ///
    /// Bodies that do not mention the key are skipped without parsing, so responses of calls that
    /// did not ask for capacity cost nothing extra.
    public static func parse(responseBody body: Data) -> [ConsumedCapacity] {
        guard body.range(of: Data("ConsumedCapacity".utf8)) != nil,
              let document = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
              let value = document["ConsumedCapacity"]
        else { return [] }
        let entries: [[String: Any]]
        if let list = value as? [[String: Any]] {
            entries = list
        } else if let single = value as? [String: Any] {
            entries = [single]
        } else {
            return []
        }
        return entries.map { entry in
            ConsumedCapacity(
                tableName: entry["TableName"] as? String,
                capacityUnits: number(entry["CapacityUnits"]),
                readCapacityUnits: number(entry["ReadCapacityUnits"]),
                writeCapacityUnits: number(entry["WriteCapacityUnits"])
            )
        }
    }

    private static func number(_ value: Any?) -> Double {
        (value as? NSNumber)?.doubleValue ?? 0
    }
}

/// Totals for one operation name (e.g. `GetItem`) since the last reset.
public struct OperationMetrics: Sendable, Hashable {
    /// Completed calls, successful or not.
    public var calls = 0
    /// Calls that ended in an error.
    public var failures = 0
    /// HTTP exchanges made, including retries.
    public var roundTrips = 0
    /// Retries made (round trips beyond the first of each call).
    public var retries = 0
    /// Sum of reported `CapacityUnits`.
    public var capacityUnits = 0.0
    /// Sum of reported `ReadCapacityUnits`.
    public var readCapacityUnits = 0.0
    /// Sum of reported `WriteCapacityUnits`.
    public var writeCapacityUnits = 0.0

    /// Creates empty totals.
    public init() {}
}

/// Collects round trips and consumed capacity per operation, so discfg can report what each
/// command really cost in requests and capacity units.
///
/// An actor because every in-flight call of a client records into the same totals.
public actor ConsumedCapacityRecorder {
    private var totals: [String: OperationMetrics] = [:]

    /// Creates an empty recorder.
    public init() {}

    /// Adds the outcome of one call.
    public func record(operation: String, roundTrips: Int, retries: Int, failed: Bool, capacity: [ConsumedCapacity]) {
        var metrics = totals[operation, default: OperationMetrics()]
        metrics.calls += 1
        if failed { metrics.failures += 1 }
        metrics.roundTrips += roundTrips
        metrics.retries += retries
        for entry in capacity {
            metrics.capacityUnits += entry.capacityUnits
            metrics.readCapacityUnits += entry.readCapacityUnits
            metrics.writeCapacityUnits += entry.writeCapacityUnits
        }
        totals[operation] = metrics
    }

    /// Totals per operation name.
    public func snapshot() -> [String: OperationMetrics] { totals }

    /// Totals of one operation (zeros when it never ran).
    public func metrics(for operation: String) -> OperationMetrics { totals[operation] ?? OperationMetrics() }

    /// Clears all totals, e.g. between benchmark phases.
    public func reset() { totals = [:] }

    /// A small fixed-width table: operation, calls, round trips, retries and capacity units.
    public func report() -> String {
        var lines = ["operation                      calls  round-trips  retries  capacity      RCU      WCU"]
        for (name, m) in totals.sorted(by: { $0.key < $1.key }) {
            lines.append(
                name.padding(toLength: 30, withPad: " ", startingAt: 0)
                    + String(format: " %6d %12d %8d %9.1f %8.1f %8.1f", m.calls, m.roundTrips, m.retries,
                             m.capacityUnits, m.readCapacityUnits, m.writeCapacityUnits)
            )
        }
        return lines.joined(separator: "\n")
    }
}
