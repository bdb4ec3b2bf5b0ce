import Foundation
import Synchronization

/// Request and store metrics, written out in Prometheus' text format at `/metrics`.
///
/// Counters and histograms live in one lock-protected table keyed by their label values;
/// a scrape turns them into text, so recording a request formats nothing.
/// Kept in-house: the handful of series discfg exports do not need a metrics stack.
public final class APIMetrics: Sendable {
    /// Latency buckets in seconds, from 100 µs to 10 s.
    static let buckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

    /// Observations per bucket, each counted once in the first bucket that holds it;
    /// Prometheus' cumulative counts are summed when rendered.
    private struct Histogram {
        var counts = [UInt64](repeating: 0, count: APIMetrics.buckets.count)
        var sum = 0.0
        var count: UInt64 = 0

        mutating func observe(_ seconds: Double) {
            if let index = APIMetrics.buckets.firstIndex(where: { seconds <= $0 }) { counts[index] += 1 }
            sum += seconds
            count += 1
        }

        /// Observations at or below each bucket's bound.
        var cumulativeCounts: [UInt64] {
            var total: UInt64 = 0
            return counts.map { count in
                total += count
                return total
            }
        }
    }

    /// The labels of a request counter; rendered as text only for a scrape.
    private struct RequestSeries: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    /// The labels of a request latency histogram.
    private struct RouteSeries: Hashable {
        var route: String
        var method: String
    }

    private struct State {
        var requests: [RequestSeries: UInt64] = [:]
        var requestLatency: [RouteSeries: Histogram] = [:]
        var storeLatency: [String: Histogram] = [:]
        var storeErrors: [String: UInt64] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty set of metrics.
    public init() {}

    /// Counts a request and its latency.
    public func recordRequest(route: String, method: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[RequestSeries(route: route, method: method, status: status), default: 0] += 1
            state.requestLatency[RouteSeries(route: route, method: method), default: Histogram()].observe(seconds)
        }
    }

    /// Records a store operation's latency, and whether it failed.
    public func recordStoreOperation(_ operation: String, seconds: Double, failed: Bool) {
        state.withLock { state in
            state.storeLatency[operation, default: Histogram()].observe(seconds)
            if failed { state.storeErrors[operation, default: 0] += 1 }
        }
    }

    /// The metrics in Prometheus text exposition format.
    public func render() -> String {
        let state = state.withLock { $0 }
        let requests = state.requests.map { series, value in
            ("route=\"\(escape(series.route))\",method=\"\(series.method)\",status=\"\(series.status)\"", value)
        }
        let requestLatency = Dictionary(uniqueKeysWithValues: state.requestLatency.map { series, histogram in
            ("route=\"\(escape(series.route))\",method=\"\(series.method)\"", histogram)
        })
        let storeLatency = Dictionary(uniqueKeysWithValues: state.storeLatency.map { ("operation=\"\($0)\"", $1) })
        let storeErrors = state.storeErrors.map { ("operation=\"\($0)\"", $1) }
        var out = ""
        out += "# HELP discfg_http_requests_total HTTP requests by route, method and status.\n# TYPE discfg_http_requests_total counter\n"
        for (labels, value) in requests.sorted(by: { $0.0 < $1.0 }) { out += "discfg_http_requests_total{\(labels)} \(value)\n" }
        out += histogram("discfg_http_request_duration_seconds", "HTTP request latency by route and method.", requestLatency)
        out += histogram("discfg_store_operation_duration_seconds", "Store operation latency by operation.", storeLatency)
        out += "# HELP discfg_store_errors_total Store operations that failed, by operation.\n# TYPE discfg_store_errors_total counter\n"
        for (labels, value) in storeErrors.sorted(by: { $0.0 < $1.0 }) { out += "discfg_store_errors_total{\(labels)} \(value)\n" }
        return out
    }

    private func histogram(_ name: String, _ help: String, _ series: [String: Histogram]) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (labels, histogram) in series.sorted(by: { $0.key < $1.key }) {
            for (bound, count) in zip(Self.buckets, histogram.cumulativeCounts) {
                out += "\(name)_bucket{\(labels),le=\"\(bound)\"} \(count)\n"
            }
            out += "\(name)_bucket{\(labels),le=\"+Inf\"} \(histogram.count)\n"
            out += "\(name)_sum{\(labels)} \(histogram.sum)\n"
            out += "\(name)_count{\(labels)} \(histogram.count)\n"
        }
        return out
    }

    private func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") }) else { return value }
        return value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }
}
