import CoreMetrics
import DiscfgCore
import Foundation
import Prometheus
import Synchronization

/// Request and store metrics, kept through swift-metrics and written out at `/metrics` in
/// Prometheus' text format by swift-prometheus.
///
/// Every series is a swift-metrics `Counter` or `Timer` made by a factory that writes
/// into this server's own ``registry`` (for `/metrics`) and, when the process bootstrapped
/// `MetricsSystem` with a backend of its own, into that backend too. The handles are made
/// once per label set and kept, so recording a routed request looks nothing up in a
/// factory. The event loops do not call them at all: their answers are counted in the
/// access log's buffers and folded in here by ``AccessLog/flush()``.
public final class APIMetrics: Sendable {
    /// Latency buckets in seconds, from 100 µs to 10 s.
    static let buckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

    /// The names users scrape, with their help text.
    enum Series {
        static let requests = "discfg_http_requests_total"
        static let requestDuration = "discfg_http_request_duration_seconds"
        static let storeDuration = "discfg_store_operation_duration_seconds"
        static let storeErrors = "discfg_store_errors_total"
        static let viewReads = "discfg_view_reads_total"
        static let loopWrites = "discfg_event_loop_writes_total"
        static let commits = "discfg_store_commits_total"
        static let commitChanges = "discfg_store_commit_changes_total"
        static let syncs = "discfg_store_syncs_total"

        static let help: [String: String] = [
            requests: "HTTP requests by route, method and status.",
            requestDuration: "HTTP request latency by route and method.",
            storeDuration: "Store operation latency by operation.",
            storeErrors: "Store operations that failed, by operation.",
            viewReads: "Key reads answered from the in-memory views, without reading the store.",
            loopWrites: "Key writes taken on the event loops and handed to the store without the router.",
            commits: "Group commits of the store.",
            commitChanges: "Changes made durable by the group commits.",
            syncs: "Syncs of the store's log: one per commit, made before it is visible.",
        ]
    }

    /// The labels of a request counter.
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

    /// The handles made so far, by their labels.
    private struct Handles {
        var requests: [RequestSeries: CoreMetrics.Counter] = [:]
        var requestLatency: [RouteSeries: CoreMetrics.Timer] = [:]
        /// By operation, in the order first seen: a few dozen short names, found by a
        /// scan that compares them whole (hashing one cost every store call more).
        var storeLatency: [(operation: String, timer: CoreMetrics.Timer)] = []
        var storeErrors: [String: CoreMetrics.Counter] = [:]
        /// The store's group-commit totals as last folded into the counters, made at
        /// the first fold: a store without group commits shows none.
        var commits = GroupCommitStatistics()
        var commitCounters: [CoreMetrics.Counter] = []
    }

    /// What `/metrics` renders.
    public let registry: PrometheusCollectorRegistry
    private let factory: any MetricsFactory
    private let handles = Mutex(Handles())
    private let viewReads: CoreMetrics.Counter
    private let loopWrites: CoreMetrics.Counter

    /// Creates an empty set of metrics.
    ///
    /// - Parameters:
    ///   - registry: Where `/metrics` reads them from.
    ///   - backend: Another swift-metrics backend that sees every series too; by default
    ///     the one `MetricsSystem` was bootstrapped with, if any (bootstrap it first).
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), backend: (any MetricsFactory)? = APIMetrics.bootstrappedBackend) {
        self.registry = registry
        let own = ExpositionFactory(registry: registry)
        factory = backend.map { MultiplexMetricsHandler(factories: [own, $0]) } ?? own
        viewReads = CoreMetrics.Counter(label: Series.viewReads, factory: factory)
        loopWrites = CoreMetrics.Counter(label: Series.loopWrites, factory: factory)
    }

    /// The backend `MetricsSystem` was bootstrapped with; nil while it is swift-metrics'
    /// no-op one.
    public static var bootstrappedBackend: (any MetricsFactory)? {
        let factory = MetricsSystem.factory
        return factory is NOOPMetricsHandler ? nil : factory
    }

    /// Counts a request and its latency.
    public func recordRequest(route: String, method: String, status: Int, seconds: Double) {
        let (counter, timer) = handles.withLock { handles in
            (requestCounter(&handles, RequestSeries(route: route, method: method, status: status)),
             requestTimer(&handles, RouteSeries(route: route, method: method)))
        }
        counter.increment()
        timer.recordNanoseconds(Self.nanoseconds(seconds))
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
    /// latency in seconds, as one update per series.
    func recordRequests(route: String, _ kind: LoopAnswer, _ answers: [(status: Int, seconds: Double)]) {
        guard !answers.isEmpty else { return }
        let method = "\(kind.method)"
        var counts: [Int: Int64] = [:]
        for answer in answers { counts[answer.status, default: 0] += 1 }
        let (counters, timer) = handles.withLock { handles in
            (counts.map { (requestCounter(&handles, RequestSeries(route: route, method: method, status: $0.key)), $0.value) },
             requestTimer(&handles, RouteSeries(route: route, method: method)))
        }
        switch kind {
        case .viewRead: viewReads.increment(by: Int64(answers.count))
        case .write: loopWrites.increment(by: Int64(answers.count))
        }
        for (counter, count) in counters { counter.increment(by: count) }
        for answer in answers { timer.recordNanoseconds(Self.nanoseconds(answer.seconds)) }
    }

    /// Records a store operation's latency, and whether it failed.
    public func recordStoreOperation(_ operation: String, seconds: Double, failed: Bool) {
        let (timer, errors) = handles.withLock { handles in
            let timer = handles.storeLatency.first(where: { $0.operation == operation })?.timer ?? {
                let timer = CoreMetrics.Timer(label: Series.storeDuration, dimensions: [("operation", operation)], factory: factory)
                handles.storeLatency.append((operation, timer))
                return timer
            }()
            guard failed else { return (timer, nil as CoreMetrics.Counter?) }
            let errors = handles.storeErrors[operation] ?? {
                let counter = CoreMetrics.Counter(label: Series.storeErrors, dimensions: [("operation", operation)], factory: factory)
                handles.storeErrors[operation] = counter
                return counter
            }()
            return (timer, errors)
        }
        timer.recordNanoseconds(Self.nanoseconds(seconds))
        errors?.increment()
    }

    /// Folds a store's group-commit totals into the commit counters: what grew since the
    /// last fold is added.
    func fold(_ commits: GroupCommitStatistics) {
        let (last, commitCounters) = handles.withLock { handles in
            defer { handles.commits = commits }
            if handles.commitCounters.isEmpty {
                handles.commitCounters = [Series.commits, Series.commitChanges, Series.syncs].map { CoreMetrics.Counter(label: $0, factory: factory) }
            }
            return (handles.commits, handles.commitCounters)
        }
        let grown = [(commits.commits, last.commits), (commits.changes, last.changes), (commits.syncs, last.syncs)]
        for (counter, (now, before)) in zip(commitCounters, grown) where now != before {
            counter.increment(by: Int64(now > before ? now - before : now))
        }
    }

    /// The metrics in Prometheus text exposition format.
    public func render() -> String {
        registry.emitToString()
    }

    /// The metrics with a store's group commits: their counts folded into the counters
    /// first, and the histogram of their sizes written after the registry's series from
    /// the store's own counts (the store keeps them per bucket, not per commit).
    func render(with commits: GroupCommitStatistics?) -> String {
        guard let commits else { return render() }
        fold(commits)
        return render() + Self.batchSizes(commits)
    }

    private static func batchSizes(_ commits: GroupCommitStatistics) -> String {
        var total: UInt64 = 0
        let cumulative = commits.batches.map { count in
            total += count
            return total
        }
        let name = "discfg_store_commit_batch_size"
        var out = "# HELP \(name) Changes per group commit.\n# TYPE \(name) histogram\n"
        for (bound, count) in zip(GroupCommitStatistics.bounds, cumulative) { out += "\(name)_bucket{le=\"\(bound)\"} \(count)\n" }
        out += "\(name)_bucket{le=\"+Inf\"} \(commits.commits)\n\(name)_sum \(commits.changes)\n\(name)_count \(commits.commits)\n"
        return out
    }

    private func requestCounter(_ handles: inout Handles, _ series: RequestSeries) -> CoreMetrics.Counter {
        if let counter = handles.requests[series] { return counter }
        let counter = CoreMetrics.Counter(
            label: Series.requests, dimensions: [("route", series.route), ("method", series.method), ("status", "\(series.status)")], factory: factory
        )
        handles.requests[series] = counter
        return counter
    }

    private func requestTimer(_ handles: inout Handles, _ series: RouteSeries) -> CoreMetrics.Timer {
        if let timer = handles.requestLatency[series] { return timer }
        let timer = CoreMetrics.Timer(label: Series.requestDuration, dimensions: [("route", series.route), ("method", series.method)], factory: factory)
        handles.requestLatency[series] = timer
        return timer
    }

    private static func nanoseconds(_ seconds: Double) -> Int64 {
        Int64((seconds * 1e9).rounded())
    }
}
