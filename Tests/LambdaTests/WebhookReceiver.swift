import DiscfgTestSupport
import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// An HTTP endpoint on a free loopback port that records every webhook delivery and
/// answers with the statuses a test scripts.
final class WebhookReceiver: Sendable {
    /// One request as it arrived.
    struct Delivery: Sendable {
        var method: String
        var path: String
        /// Header values by lower-cased name.
        var headers: [String: String]
        var body: Data
        /// The status it was answered with.
        var status: Int

        var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    private struct State {
        var deliveries: [Delivery] = []
        var scriptedStatuses: [Int] = []
    }

    let port: Int
    private let box: StateBox
    private let server: Task<Void, any Error>

    /// `http://127.0.0.1:PORT/hook`.
    var url: String { "http://127.0.0.1:\(port)/hook" }

    private init(port: Int, box: StateBox, server: Task<Void, any Error>) {
        self.port = port
        self.box = box
        self.server = server
    }

    /// Starts the receiver; it answers 200 unless told otherwise with ``answer(_:)``.
    static func start() async throws -> WebhookReceiver {
        let box = StateBox()
        let router = Router(context: BasicRequestContext.self)
        router.on("/hook", method: .post) { request, _ in
            let body = Data(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            var headers: [String: String] = [:]
            for field in request.headers {
                let name = field.name.canonicalName
                headers[name] = headers[name].map { "\($0),\(field.value)" } ?? field.value
            }
            let status = box.record(method: request.method.rawValue, path: request.uri.path, headers: headers, body: body)
            return Response(status: HTTPResponse.Status(code: status), body: ResponseBody(byteBuffer: ByteBuffer(string: "{}")))
        }
        let (port, server) = try await LoopbackApplication.start(router, name: "the webhook receiver")
        return WebhookReceiver(port: port, box: box, server: server)
    }

    /// Answers the next requests with these statuses, in order, then 200 again.
    func answer(_ statuses: Int...) {
        box.state.withLock { $0.scriptedStatuses += statuses }
    }

    /// Answers every request with `status` from now on (until ``answer(_:)`` or this is called again).
    func answerAlways(_ status: Int?) {
        box.state.withLock { $0.scriptedStatuses = status.map { Array(repeating: $0, count: 1000) } ?? [] }
    }

    /// Every request so far, in order of arrival.
    var deliveries: [Delivery] { box.state.withLock { $0.deliveries } }

    /// The requests answered with a 2xx status.
    var accepted: [Delivery] { deliveries.filter { (200..<300).contains($0.status) } }

    func stop() async {
        server.cancel()
        _ = await server.result
    }

    /// Shares the recorder's state between the route and the receiver.
    private final class StateBox: Sendable {
        let state = Mutex(State())

        func record(method: String, path: String, headers: [String: String], body: Data) -> Int {
            state.withLock { state in
                let status = state.scriptedStatuses.isEmpty ? 200 : state.scriptedStatuses.removeFirst()
                state.deliveries.append(Delivery(method: method, path: path, headers: headers, body: body, status: status))
                return status
            }
        }
    }
}
