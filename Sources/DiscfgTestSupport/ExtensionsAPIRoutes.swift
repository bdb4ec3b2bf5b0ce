import Foundation
import Hummingbird
import NIOCore

/// The Extensions API's documented routes (version 2020-01-01) over ``ExtensionsAPIState``.
struct ExtensionsAPIRoutes: Sendable {
    typealias HeaderName = HTTPFields.Element.Name

    static let nameHeader = HeaderName("Lambda-Extension-Name")!
    static let identifierHeader = HeaderName("Lambda-Extension-Identifier")!
    static let eventIdentifierHeader = HeaderName("Lambda-Extension-Event-Identifier")!
    static let errorTypeHeader = HeaderName("Lambda-Extension-Function-Error-Type")!

    let state: ExtensionsAPIState
    let functionName: String

    func register(on router: Router<BasicRequestContext>) {
        let api = router.group("2020-01-01/extension")
        api.post("register") { request, _ in try await register(request) }
        api.get("event/next") { request, _ in try await next(request) }
        api.post("init/error") { request, _ in try await reportedError(request, route: .initError) }
        api.post("exit/error") { request, _ in try await reportedError(request, route: .exitError) }
    }

    /// `POST register` with `{"events":[…]}`: answers the identifier and the function's names.
    private func register(_ request: Request) async throws -> Response {
        await state.record(.register, identifier: nil)
        struct Body: Decodable { var events: [String]? }
        let body = try await request.body.collect(upTo: 64 * 1024)
        let events = (try? JSONDecoder().decode(Body.self, from: Data(body.readableBytesView)))?.events
        try await delay()
        guard let identifier = await state.register(name: request.headers[Self.nameHeader], events: events) else {
            return Self.reply(.badRequest, ["errorType": "InvalidRequest", "errorMessage": "register needs Lambda-Extension-Name and events INVOKE or SHUTDOWN"])
        }
        var response = Self.reply(.ok, ["functionName": functionName, "functionVersion": "$LATEST", "handler": "bootstrap"])
        response.headers[Self.identifierHeader] = identifier
        return response
    }

    /// `GET event/next`: blocks until an event is queued.
    private func next(_ request: Request) async throws -> Response {
        let identifier = request.headers[Self.identifierHeader]
        await state.record(.next, identifier: identifier)
        guard await state.knows(identifier, route: .next) else {
            return Self.reply(.forbidden, ["errorType": "Extension.InvalidExtensionIdentifier", "errorMessage": "unknown extension identifier"])
        }
        let event = try await state.next()
        try await delay()
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[Self.eventIdentifierHeader] = UUID().uuidString.lowercased()
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: event.body)))
    }

    /// `POST init/error` and `POST exit/error` with `{"errorMessage", "errorType"}`.
    private func reportedError(_ request: Request, route: ExtensionsAPIEmulator.Route) async throws -> Response {
        let identifier = request.headers[Self.identifierHeader]
        await state.record(route, identifier: identifier)
        let body = Data(try await request.body.collect(upTo: 1024 * 1024).readableBytesView)
        guard await state.knows(identifier, route: route) else {
            return Self.reply(.forbidden, ["errorType": "Extension.InvalidExtensionIdentifier", "errorMessage": "unknown extension identifier"])
        }
        struct ErrorBody: Decodable {
            var errorMessage: String?
            var errorType: String?
        }
        let decoded = try? JSONDecoder().decode(ErrorBody.self, from: body)
        let header = request.headers[Self.errorTypeHeader]
        await state.recordError(ExtensionsAPIEmulator.ReportedError(
            route: route, type: decoded?.errorType ?? header ?? "Unknown",
            message: decoded?.errorMessage ?? String(decoding: body, as: UTF8.self), errorTypeHeader: header, at: .now
        ))
        try await delay()
        return Self.reply(.accepted, ["status": "OK"])
    }

    private func delay() async throws {
        let delay = await state.answerDelay
        if delay > .zero { try await Task.sleep(for: delay) }
    }

    private static func reply(_ status: HTTPResponse.Status, _ fields: [String: String]) -> Response {
        let body = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
