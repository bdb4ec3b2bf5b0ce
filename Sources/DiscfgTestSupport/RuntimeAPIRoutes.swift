import Foundation
import Hummingbird
import NIOCore

/// The Runtime API's documented routes (version 2018-06-01) over ``RuntimeAPIState``.
struct RuntimeAPIRoutes: Sendable {
    typealias HeaderName = HTTPFields.Element.Name

    static let requestIDHeader = HeaderName("Lambda-Runtime-Aws-Request-Id")!
    static let deadlineHeader = HeaderName("Lambda-Runtime-Deadline-Ms")!
    static let functionARNHeader = HeaderName("Lambda-Runtime-Invoked-Function-Arn")!
    static let traceIDHeader = HeaderName("Lambda-Runtime-Trace-Id")!
    static let errorTypeHeader = HeaderName("Lambda-Runtime-Function-Error-Type")!

    let state: RuntimeAPIState
    let functionARN: String

    func register(on router: Router<BasicRequestContext>) {
        let api = router.group("2018-06-01/runtime")
        api.get("invocation/next") { _, _ in try await next() }
        api.post("invocation/:id/response") { request, context in
            try await response(request, id: context.parameters.require("id"))
        }
        api.post("invocation/:id/error") { request, context in
            try await error(request, id: context.parameters.require("id"))
        }
        api.post("init/error") { request, _ in try await initError(request) }
    }

    /// `GET invocation/next`: blocks until an event is queued.
    private func next() async throws -> Response {
        let invocation = try await state.next()
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[Self.requestIDHeader] = invocation.requestID
        headers[Self.deadlineHeader] = String(invocation.deadlineMs)
        headers[Self.functionARNHeader] = functionARN
        headers[Self.traceIDHeader] = invocation.traceID
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: invocation.event)))
    }

    /// `POST invocation/:id/response`.
    private func response(_ request: Request, id: String) async throws -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: RuntimeAPIEmulator.maxResponseBytes)
        } catch {
            let outcome = await state.answer(
                id, result: .error(type: "Function.ResponseSizeTooLarge", message: "the response is over \(RuntimeAPIEmulator.maxResponseBytes) bytes"),
                errorTypeHeader: nil, route: "response"
            )
            return outcome == .accepted
                ? Self.errorReply(.contentTooLarge, type: "RequestEntityTooLarge", message: "the response is over \(RuntimeAPIEmulator.maxResponseBytes) bytes")
                : Self.refusal(outcome, id: id)
        }
        let outcome = await state.answer(id, result: .response(Data(body.readableBytesView)), errorTypeHeader: nil, route: "response")
        return outcome == .accepted ? Self.accepted() : Self.refusal(outcome, id: id)
    }

    /// `POST invocation/:id/error` with `{"errorMessage", "errorType", "stackTrace"}`.
    private func error(_ request: Request, id: String) async throws -> Response {
        let body = Data(try await request.body.collect(upTo: RuntimeAPIEmulator.maxResponseBytes).readableBytesView)
        let header = request.headers[Self.errorTypeHeader]
        let (type, message) = Self.errorFields(body, header: header)
        if (try? JSONDecoder().decode(ErrorBody.self, from: body)) == nil {
            await state.recordViolation("error for request id \(id): the body is not {\"errorMessage\", \"errorType\"} JSON")
        }
        let outcome = await state.answer(id, result: .error(type: type, message: message), errorTypeHeader: header, route: "error")
        return outcome == .accepted ? Self.accepted() : Self.refusal(outcome, id: id)
    }

    /// `POST init/error`.
    private func initError(_ request: Request) async throws -> Response {
        let body = Data(try await request.body.collect(upTo: RuntimeAPIEmulator.maxResponseBytes).readableBytesView)
        let header = request.headers[Self.errorTypeHeader]
        let (type, message) = Self.errorFields(body, header: header)
        await state.recordInitError(RuntimeAPIEmulator.InitError(type: type, message: message, errorTypeHeader: header, body: body, at: .now))
        return Self.accepted()
    }

    private struct ErrorBody: Codable {
        var errorMessage: String?
        var errorType: String?
        var stackTrace: [String]?
    }

    private static func errorFields(_ body: Data, header: String?) -> (type: String, message: String) {
        let decoded = try? JSONDecoder().decode(ErrorBody.self, from: body)
        let type = decoded?.errorType ?? header ?? "Unknown"
        let message = decoded?.errorMessage ?? String(decoding: body, as: UTF8.self)
        return (type, message)
    }

    private static func accepted() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .accepted, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"status":"OK"}"#)))
    }

    /// Lambda's answers to a request that does not fit the invocation's state.
    private static func refusal(_ outcome: RuntimeAPIState.AnswerOutcome, id: String) -> Response {
        switch outcome {
        case .accepted: accepted()
        case .unknownRequest: errorReply(.badRequest, type: "InvalidRequestID", message: "no invocation has request id \(id)")
        case .notDelivered: errorReply(.badRequest, type: "InvalidStateTransition", message: "invocation \(id) was not handed out yet")
        case .alreadyFinished: errorReply(.badRequest, type: "InvalidStateTransition", message: "invocation \(id) was already answered")
        }
    }

    private static func errorReply(_ status: HTTPResponse.Status, type: String, message: String) -> Response {
        let body = (try? JSONEncoder().encode(ErrorBody(errorMessage: message, errorType: type))) ?? Data()
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
