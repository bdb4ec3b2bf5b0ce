import AsyncHTTPClient
import DiscfgCore
import Foundation
import NIOCore
import NIOHTTP1

/// One event handed to the function by the Lambda Runtime API.
public struct Invocation: Sendable {
    /// `Lambda-Runtime-Aws-Request-Id`.
    public var requestID: String
    /// When Lambda stops the invocation (`Lambda-Runtime-Deadline-Ms`).
    public var deadline: Date
    /// `Lambda-Runtime-Invoked-Function-Arn`.
    public var functionARN: String?
    /// `Lambda-Runtime-Trace-Id`, also exported as `_X_AMZN_TRACE_ID`.
    public var traceID: String?
    /// The event, as JSON.
    public var event: Data

    public init(requestID: String, deadline: Date, functionARN: String? = nil, traceID: String? = nil, event: Data) {
        self.requestID = requestID
        self.deadline = deadline
        self.functionARN = functionARN
        self.traceID = traceID
        self.event = event
    }

    /// Time left before the deadline, measured on the monotonic clock from now.
    public var deadlineInstant: ContinuousClock.Instant {
        // Lambda's invocations last at most 15 minutes; a day bounds a wild header.
        .now + .milliseconds(Int64(min(max(0, deadline.timeIntervalSinceNow), 86_400) * 1000))
    }
}

/// A failure reported to the Runtime API: `{"errorMessage", "errorType", "stackTrace"}`.
public struct LambdaFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var message: String

    public init(type: String, message: String) {
        self.type = type
        self.message = message
    }

    public var description: String { "\(type): \(message)" }

    var json: Data {
        let body: [String: any Sendable] = ["errorMessage": message, "errorType": type, "stackTrace": [String]()]
        return (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data("{}".utf8)
    }
}

/// The Runtime API client (version 2018-06-01): next invocation, response, error and
/// init error, over the loopback HTTP endpoint named by `AWS_LAMBDA_RUNTIME_API`.
final class RuntimeAPIClient: Sendable {
    private let base: String
    private let http: HTTPClient

    /// Errors talking to the Runtime API itself; the runtime cannot go on without it.
    struct TransportError: Error, CustomStringConvertible {
        var description: String
    }

    init(address: String, http: HTTPClient) {
        base = "http://\(address)/2018-06-01/runtime"
        self.http = http
    }

    /// Waits for the next event: Lambda answers when there is one, freezing the process meanwhile.
    func next() async throws -> Invocation {
        let request = HTTPClientRequest(url: "\(base)/invocation/next")
        let response = try await http.execute(request, timeout: .hours(24))
        let body = try await response.body.collect(upTo: 6 * 1024 * 1024 + 1024)
        guard response.status == .ok else {
            throw TransportError(description: "the Runtime API answered next with \(response.status.code): \(String(buffer: body))")
        }
        guard let requestID = response.headers.first(name: "Lambda-Runtime-Aws-Request-Id"), !requestID.isEmpty else {
            throw TransportError(description: "the Runtime API sent an event without Lambda-Runtime-Aws-Request-Id")
        }
        let deadlineMs = response.headers.first(name: "Lambda-Runtime-Deadline-Ms").flatMap { try? NumberField("Lambda-Runtime-Deadline-Ms", 0...Int64.max).parse($0) }
        let deadline = deadlineMs.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date().addingTimeInterval(30)
        return Invocation(
            requestID: requestID,
            deadline: deadline,
            functionARN: response.headers.first(name: "Lambda-Runtime-Invoked-Function-Arn"),
            traceID: response.headers.first(name: "Lambda-Runtime-Trace-Id"),
            event: Data(buffer: body)
        )
    }

    /// Sends the invocation's result.
    func respond(_ requestID: String, body: Data) async throws {
        try await post("\(base)/invocation/\(requestID)/response", body: body, errorType: nil)
    }

    /// Reports that the invocation failed.
    func fail(_ requestID: String, _ failure: LambdaFailure) async throws {
        try await post("\(base)/invocation/\(requestID)/error", body: failure.json, errorType: failure.type)
    }

    /// Reports that the function could not start; Lambda then stops the process.
    func failInit(_ failure: LambdaFailure) async throws {
        try await post("\(base)/init/error", body: failure.json, errorType: failure.type)
    }

    private func post(_ url: String, body: Data, errorType: String?) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let errorType { request.headers.add(name: "Lambda-Runtime-Function-Error-Type", value: errorType) }
        request.body = .bytes(ByteBuffer(data: body))
        let response = try await http.execute(request, timeout: .seconds(30))
        let text = try await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(response.status.code) else {
            throw TransportError(description: "the Runtime API refused \(url) with \(response.status.code): \(String(buffer: text))")
        }
    }
}
