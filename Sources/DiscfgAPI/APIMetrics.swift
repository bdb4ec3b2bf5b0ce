import DiscfgCore
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
        var viewReads: UInt64 = 0
        var loopWrites: UInt64 = 0
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

    /// What the event loops answer without the router.
    enum LoopAnswer {
        /// A key read from the views (`GET`).
        case viewRead
        /// A key write handed to the store (`PUT`).
        case write

        var method: StaticString {
            switch self {
            case .viewRead: "GET"
            case .write: "PUT"
            }
        }
    }

    /// Records many answers of one kind given on the event loops, each a status and a
    /// latency in seconds, as one update.
    func recordRequests(route: String, _ kind: LoopAnswer, _ answers: [(status: Int, seconds: Double)]) {
        guard !answers.isEmpty else { return }
        let method = "\(kind.method)"
        state.withLock { state in
            switch kind {
            case .viewRead: state.viewReads += UInt64(answers.count)
            case .write: state.loopWrites += UInt64(answers.count)
            }
            var histogram = state.requestLatency.removeValue(forKey: RouteSeries(route: route, method: method)) ?? Histogram()
            var counts: [Int: UInt64] = [:]
            for answer in answers {
                counts[answer.status, default: 0] += 1
                histogram.observe(answer.seconds)
            }
            state.requestLatency[RouteSeries(route: route, method: method)] = histogram
            for (status, count) in counts {
                state.requests[RequestSeries(route: route, method: method, status: status), default: 0] += count
            }
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
        out += Self.counter("discfg_view_reads_total", "Key reads answered from the in-memory views, without reading the store.", state.viewReads)
        out += Self.counter("discfg_event_loop_writes_total", "Key writes taken on the event loops and handed to the store without the router.", state.loopWrites)
        return out
    }

    /// A store's group commits and the syncs that made them durable.
    static func render(_ commits: GroupCommitStatistics) -> String {
        var out = counter("discfg_store_commits_total", "Group commits of the store.", commits.commits)
        out += counter("discfg_store_commit_changes_total", "Changes made durable by the group commits.", commits.changes)
        out += counter("discfg_store_syncs_total", "Syncs of the store's log: one per commit, made before it is visible.", commits.syncs)
        var total: UInt64 = 0
        let cumulative = commits.batches.map { count in
            total += count
            return total
        }
        out += "# HELP discfg_store_commit_batch_size Changes per group commit.\n# TYPE discfg_store_commit_batch_size histogram\n"
        out += buckets("discfg_store_commit_batch_size", labels: "", bounds: GroupCommitStatistics.bounds.map(String.init), cumulative: cumulative, count: commits.commits, sum: "\(commits.changes)")
        return out
    }

    private static func counter(_ name: String, _ help: String, _ value: UInt64) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
    }

    private func histogram(_ name: String, _ help: String, _ series: [String: Histogram]) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (labels, histogram) in series.sorted(by: { $0.key < $1.key }) {
            out += Self.buckets(
                name, labels: labels + ",", bounds: Self.buckets.map { "\($0)" }, cumulative: histogram.cumulativeCounts, count: histogram.count,
                sum: "\(histogram.sum)"
            )
        }
        return out
    }

    /// One histogram series: its buckets (`labels` ends with a comma when not empty), sum and count.
    private static func buckets(_ name: String, labels: String, bounds: [String], cumulative: [UInt64], count: UInt64, sum: String) -> String {
        var out = ""
        for (bound, total) in zip(bounds, cumulative) { out += "\(name)_bucket{\(labels)le=\"\(bound)\"} \(total)\n" }
        out += "\(name)_bucket{\(labels)le=\"+Inf\"} \(count)\n"
        let series = labels.isEmpty ? "" : "{\(labels.dropLast())}"
        out += "\(name)_sum\(series) \(sum)\n"
        out += "\(name)_count\(series) \(count)\n"
        return out
    }

    private func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") }) else { return value }
        return value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }
}
