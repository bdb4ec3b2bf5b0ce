import DiscfgAWS
import DiscfgCore
import DiscfgNetwork
import DiscfgTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// The one failure policy: which errors a caller sees as they are, which in general
/// terms with a correlation id, and the status and gRPC code of each.
@Suite("Failure policy: one answer per failure, on every face")
struct FailurePolicyTests {
    /// Every code: its HTTP status, its gRPC code, and whether the caller sees it as is.
    static let table: [(DiscfgError.Code, Int, GRPCStatusCode, Bool)] = [
        (.invalidArgument, 400, .invalidArgument, true),
        (.configNotFound, 404, .notFound, true),
        (.keyNotFound, 404, .notFound, true),
        (.configExists, 409, .alreadyExists, true),
        (.conditionFailed, 412, .failedPrecondition, true),
        (.tooLarge, 413, .invalidArgument, true),
        (.quotaExceeded, 507, .resourceExhausted, true),
        (.compacted, 410, .outOfRange, true),
        (.pathNotFound, 404, .notFound, true),
        (.patchFailed, 409, .failedPrecondition, true),
        (.unsupportedMediaType, 415, .invalidArgument, true),
        (.schemaViolation, 422, .failedPrecondition, true),
        (.notRepresentable, 409, .invalidArgument, true),
        (.readOnly, 405, .failedPrecondition, true),
        (.unauthenticated, 401, .unauthenticated, true),
        (.permissionDenied, 403, .permissionDenied, true),
        (.throttled, 429, .resourceExhausted, false),
        (.unavailable, 503, .unavailable, false),
        (.internal, 500, .internalError, false),
    ]

    @Test("every code has its status, its gRPC code, and is shown as is or in general terms")
    func everyCode() {
        #expect(Set(Self.table.map(\.0)) == Set(DiscfgError.Code.allCases))
        let log = RecordingLog()
        for (code, status, grpc, callers) in Self.table {
            let error = DiscfgError(code, "secret detail /var/lib/discfg.db", field: "key")
            #expect(FailurePolicy.httpStatus(for: code).code == status, "\(code)")
            #expect(FailurePolicy.grpcCode(for: code) == grpc, "\(code)")
            let shown = FailurePolicy.shown(error, logger: log.logger)
            if callers {
                #expect(shown == error, "\(code)")
            } else {
                #expect(shown.code == code)
                #expect(!shown.message.contains("secret"), "\(shown.message)")
                guard let id = shown.correlationID else {
                    Issue.record("no correlation id for \(code)")
                    continue
                }
                #expect(shown.message.contains(id))
                #expect(log.lines.last?.contains(id) == true && log.lines.last?.contains("secret detail") == true)
            }
        }
    }

    @Test("the store's own errors, and errors that are not discfg's, are never shown")
    func foreign() throws {
        let log = RecordingLog()
        struct LibraryError: Error { let path = "/home/ops/secret" }
        let cases: [any Error] = [
            LibraryError(),
            AWSError(code: .network, awsCode: "NetworkError", message: "arn:aws:dynamodb:eu-west-1:123456789012:table/t", httpStatus: nil),
            DiscfgError(.unauthenticated, "DynamoDB GetItem on table t failed: ExpiredToken", field: "credentials"),
            DiscfgError(.unavailable, "cannot open SQLite store /var/lib/x.db", field: "store"),
        ]
        for error in cases {
            let shown = FailurePolicy.shown(error, logger: log.logger)
            #expect([.internal, .unavailable].contains(shown.code))
            for secret in ["/home/ops", "arn:aws", "123456789012", "ExpiredToken", "/var/lib", "LibraryError", "table"] {
                #expect(!shown.message.contains(secret), "\(shown.message)")
            }
            let id = try #require(shown.correlationID)
            #expect(log.lines.contains { $0.contains(id) })
        }
        // A deadline's answer is the server's words about the request, shown as it is.
        let timeout = Deadline.exceeded()
        #expect(FailurePolicy.shown(timeout, logger: log.logger) == timeout)
    }

    @Test("a dead DynamoDB endpoint fails within the request's deadline, not after the whole retry budget", .timeLimit(.minutes(1)))
    func deadEndpoint() async throws {
        let closed = try MotoServer.freeLoopbackPort()
        // A proxy that holds every call far past the deadline: an endpoint that never answers.
        try await withServer(try await FaultProxy.start(upstream: URL(string: "http://127.0.0.1:\(closed)")!, seed: 1, rates: [.delay: 1], delay: .seconds(60))) { proxy in
            for endpoint in [proxy.endpoint, URL(string: "http://127.0.0.1:\(closed)")!] {
                let client = AWSJSONClient(
                    configuration: .dynamoDB(region: "us-east-1", endpoint: endpoint),
                    credentialProvider: StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"))
                )
                let deadline = Deadline.after(.seconds(2))
                let start = ContinuousClock.now
                await #expect(throws: AWSError.self) {
                    _ = try await client.send(operation: "GetItem", body: Data(#"{"TableName": "t"}"#.utf8), deadline: deadline.instant)
                }
                // Generous: within twice the deadline (the whole retry budget was 40 s and more).
                #expect(ContinuousClock.now - start < .seconds(4), "\(endpoint)")
                try await client.shutdown()
            }
        }
    }
}

/// A logger whose lines a test reads.
final class RecordingLog: Sendable {
    private let recorded = Mutex<[String]>([])
    var lines: [String] { recorded.withLock { $0 } }

    var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    fileprivate func append(_ line: String) { recorded.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let log: RecordingLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append("\(event.message) " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
    }
}
