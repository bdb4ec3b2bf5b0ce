import Foundation
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// `serve --otel-endpoint URL`: the server's spans (requests, their store calls, AWS
/// calls) exported over OTLP/HTTP by swift-otel, in batches, to a collector.
struct OTelEndpoint: Sendable, Equatable {
    /// Where spans are POSTed: the URL given, with `/v1/traces` appended when it names no
    /// path, as OTLP/HTTP exporters treat a collector's base URL.
    let tracesURL: String

    /// Reads `--otel-endpoint`: an `http://` or `https://` URL with a host.
    init(parsing text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = components.host, !host.isEmpty, components.query == nil, components.fragment == nil
        else {
            throw usage(
                "--otel-endpoint takes the http:// or https:// URL of an OTLP/HTTP collector (e.g. http://127.0.0.1:4318), got \"\(text.debugEscaped)\"",
                field: "--otel-endpoint"
            )
        }
        let path = components.path
        tracesURL = path.isEmpty || path == "/" ? text.replacingOccurrences(of: "/+$", with: "", options: .regularExpression) + "/v1/traces" : text
    }

    /// A tracer exporting to the endpoint, made the process's (so that libraries tracing
    /// through `InstrumentationSystem`, the AWS client among them, export there too), and
    /// the service that sends its batches and flushes them when the server stops.
    func bootstrap() throws -> some Service {
        var configuration = OTel.Configuration.default
        configuration.serviceName = "discfg"
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.traces.otlpExporter.endpoint = tracesURL
        configuration.diagnosticLogLevel = .warning
        let (tracer, service) = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(tracer)
        return service
    }
}
