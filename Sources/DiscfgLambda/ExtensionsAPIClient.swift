import AsyncHTTPClient
import DiscfgCore
import Foundation
import NIOCore
import NIOHTTP1

/// One event an external extension receives from `…/extension/event/next`.
public enum ExtensionEvent: Sendable, Equatable {
    /// The function is being invoked: `{"eventType":"INVOKE","requestId",…,"deadlineMs"}`.
    case invoke(requestID: String, deadline: Date)
    /// The execution environment is going away: `{"eventType":"SHUTDOWN","shutdownReason","deadlineMs"}`.
    /// `reason` is Lambda's `SPINDOWN`, `TIMEOUT` or `FAILURE`.
    case shutdown(reason: String, deadline: Date)
}

/// The Extensions API client (version 2020-01-01) of an external extension: register, next
/// event, and the init and exit errors, over the loopback endpoint named by
/// `AWS_LAMBDA_RUNTIME_API`, as ``RuntimeAPIClient`` talks to the Runtime API.
///
/// ```swift
/// let api = try await ExtensionsAPIClient.register(name: "discfg-agent", address: address, http: http)
/// while case .invoke = try await api.next() {}
/// ```
final class ExtensionsAPIClient: Sendable {
    /// The header naming the extension at registration; it must be the file name under `/opt/extensions`.
    static let nameHeader = "Lambda-Extension-Name"
    /// The header with the identifier Lambda gives at registration, sent with every later call.
    static let identifierHeader = "Lambda-Extension-Identifier"
    /// The header carrying a reported error's type.
    static let errorTypeHeader = "Lambda-Extension-Function-Error-Type"

    /// The identifier Lambda gave this extension.
    let identifier: String
    private let base: String
    private let http: HTTPClient

    private init(identifier: String, base: String, http: HTTPClient) {
        self.identifier = identifier
        self.base = base
        self.http = http
    }

    /// Registers the extension for INVOKE and SHUTDOWN events.
    ///
    /// - Parameters:
    ///   - name: The extension's file name under `/opt/extensions`.
    ///   - address: `AWS_LAMBDA_RUNTIME_API` (`host:port`).
    /// - Throws: ``RuntimeAPIClient/TransportError`` when Lambda refuses or gives no identifier.
    static func register(name: String, address: String, http: HTTPClient) async throws -> ExtensionsAPIClient {
        let base = "http://\(address)/2020-01-01/extension"
        var request = HTTPClientRequest(url: "\(base)/register")
        request.method = .POST
        request.headers.add(name: nameHeader, value: name)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"events":["INVOKE","SHUTDOWN"]}"#))
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard response.status == .ok else {
            throw RuntimeAPIClient.TransportError(description: "the Extensions API refused register with \(response.status.code): \(String(buffer: body))")
        }
        guard let identifier = response.headers.first(name: identifierHeader), !identifier.isEmpty else {
            throw RuntimeAPIClient.TransportError(description: "the Extensions API answered register without \(identifierHeader)")
        }
        return ExtensionsAPIClient(identifier: identifier, base: base, http: http)
    }

    /// Waits for the next event; Lambda freezes the process until there is one.
    func next() async throws -> ExtensionEvent {
        var request = HTTPClientRequest(url: "\(base)/event/next")
        request.headers.add(name: Self.identifierHeader, value: identifier)
        let response = try await http.execute(request, timeout: .hours(24))
        let body = try await response.body.collect(upTo: 1024 * 1024)
        guard response.status == .ok else {
            throw RuntimeAPIClient.TransportError(description: "the Extensions API answered event/next with \(response.status.code): \(String(buffer: body))")
        }
        return try Self.event(Data(buffer: body))
    }

    /// Reports that the extension could not initialize; Lambda then fails the init phase.
    func failInit(_ failure: LambdaFailure) async throws {
        try await post("\(base)/init/error", failure)
    }

    /// Reports that the extension is exiting on an error.
    func failExit(_ failure: LambdaFailure) async throws {
        try await post("\(base)/exit/error", failure)
    }

    /// Parses an event/next body.
    static func event(_ body: Data) throws -> ExtensionEvent {
        struct Body: Decodable {
            var eventType: String
            var requestId: String?
            var deadlineMs: Int64?
            var shutdownReason: String?
        }
        guard let decoded = try? JSONDecoder().decode(Body.self, from: body) else {
            throw RuntimeAPIClient.TransportError(description: "the Extensions API sent an event that is not JSON with eventType: \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        // Lambda's deadlines are epoch milliseconds; a missing one is treated as 2 s away,
        // the shortest shutdown phase Lambda documents for external extensions.
        let deadline = decoded.deadlineMs.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date().addingTimeInterval(2)
        switch decoded.eventType {
        case "INVOKE": return .invoke(requestID: decoded.requestId ?? "", deadline: deadline)
        case "SHUTDOWN": return .shutdown(reason: decoded.shutdownReason ?? "", deadline: deadline)
        default: throw RuntimeAPIClient.TransportError(description: "the Extensions API sent an unknown event type \(decoded.eventType)")
        }
    }

    private func post(_ url: String, _ failure: LambdaFailure) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: Self.identifierHeader, value: identifier)
        request.headers.add(name: Self.errorTypeHeader, value: failure.type)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: failure.json))
        let response = try await http.execute(request, timeout: .seconds(30))
        let text = try await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(response.status.code) else {
            throw RuntimeAPIClient.TransportError(description: "the Extensions API refused \(url) with \(response.status.code): \(String(buffer: text))")
        }
    }
}
