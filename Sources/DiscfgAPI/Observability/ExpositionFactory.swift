import CoreMetrics
import Prometheus

/// The swift-metrics factory behind `/metrics`: each handler is made in a Prometheus
/// registry with discfg's help text and latency buckets for its series.
///
/// swift-prometheus' own factory registers every series without help text, and a
/// registry refuses a second help text for a name, so discfg's series are made here.
/// Series of other labels (a library's that records through this factory) get no help
/// text and swift-prometheus' buckets.
struct ExpositionFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    /// Timer buckets: discfg's latency buckets, from 100 µs to 10 s.
    private static let durations: [Duration] = APIMetrics.buckets.map { .nanoseconds(Int64(($0 * 1e9).rounded())) }
    private static let values: [Double] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]

    /// The series named `label` (its whole name: the unit is in it), with its help text.
    private func named(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: APIMetrics.Series.help[label] ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: named(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: named(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: named(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: named(label), labels: dimensions, buckets: Self.values)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: named(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: named(label), labels: dimensions, buckets: Self.durations)
    }

    // The series live as long as the server: a handler let go stays in the registry.
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}
