import CoreMetrics
import DiscfgFlags
import Synchronization
import Tracing

/// Where a ``RemoteConfig``'s flag evaluations are reported: a `feature_flag.evaluation`
/// counter through swift-metrics, and a `feature_flag.evaluation` event on the caller's
/// current span through swift-distributed-tracing, named as OpenTelemetry's semantic
/// conventions for feature flags name them.
///
/// The counter's dimensions are `feature_flag.key`, `feature_flag.variant` (`default` when
/// the caller's default answered) and `feature_flag.reason`; the event's attributes are
/// `feature_flag.key`, `feature_flag.result.variant` (when a variant answered),
/// `feature_flag.result.reason` and, on failure, `error.type`. Reasons and error codes are
/// written in lower case (`targeting_match`, `flag_not_found`), as the conventions spell them.
public final class FlagTelemetry: Sendable {
    /// The metric and event name.
    public static let name = "feature_flag.evaluation"

    private struct Series: Hashable {
        var key: String
        var variant: String
        var reason: String
    }

    private let metrics: (any MetricsFactory)?
    private let tracer: (any Tracer)?
    private let counters = Mutex<[Series: Counter]>([:])

    /// Reports to `metrics` and `tracer`; nil for the ones `MetricsSystem` and
    /// `InstrumentationSystem` were bootstrapped with (the tracer read at each evaluation,
    /// the metrics backend when a series is first counted).
    public init(metrics: (any MetricsFactory)? = nil, tracer: (any Tracer)? = nil) {
        self.metrics = metrics
        self.tracer = tracer
    }

    /// Counts one evaluation of `key` and adds its event to the current span, if there is one.
    func record(_ key: String, variant: String?, reason: EvaluationReason, errorCode: EvaluationErrorCode?) {
        let reasonText = reason.rawValue.lowercased()
        let series = Series(key: key, variant: variant ?? "default", reason: reasonText)
        let counter = counters.withLock { counters in
            if let counter = counters[series] { return counter }
            let counter = Counter(
                label: Self.name,
                dimensions: [("feature_flag.key", series.key), ("feature_flag.variant", series.variant), ("feature_flag.reason", series.reason)],
                factory: metrics ?? MetricsSystem.factory
            )
            counters[series] = counter
            return counter
        }
        counter.increment()

        let tracer = tracer ?? InstrumentationSystem.tracer
        guard let context = InstrumentationContext.current, let span = tracer.activeSpan(identifiedBy: context) else { return }
        var attributes: SpanAttributes = [:]
        attributes["feature_flag.key"] = key
        if let variant { attributes["feature_flag.result.variant"] = variant }
        attributes["feature_flag.result.reason"] = reasonText
        if let errorCode { attributes["error.type"] = errorCode.rawValue.lowercased() }
        span.addEvent(SpanEvent(name: Self.name, attributes: attributes))
    }
}
