import DiscfgTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A tiny scripted HTTP/1.1 server on a loopback port, for credential endpoints and retry tests.
final class LocalHTTPServer: TestServer {
    struct Request: Sendable {
        let method: String
        let uri: String
        let headers: [(String, String)]
        let body: Data

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    enum Reply: Sendable {
        /// Sends a status, headers and body, optionally after a delay.
        case response(status: Int, headers: [(String, String)] = [], body: Data = Data(), delay: TimeAmount = .zero)
        /// Closes the connection without answering, to simulate a transport failure.
        case dropConnection

        static func json(_ status: Int, _ text: String, headers: [(String, String)] = [], delay: TimeAmount = .zero) -> Reply {
            .response(status: status, headers: [("Content-Type", "application/json")] + headers,
                      body: Data(text.utf8), delay: delay)
        }

        static func text(_ status: Int, _ text: String) -> Reply {
            .response(status: status, headers: [("Content-Type", "text/plain")], body: Data(text.utf8))
        }
    }

    typealias Responder = @Sendable (Request, Int) -> Reply

    private let channel: any Channel
    private let state: NIOLockedValueBox<[Request]>
    let port: Int

    /// Starts serving on `port` (0 for any free one); `responder` gets each request and
    /// its 0-based index.
    init(port: Int = 0, responder: @escaping Responder) async throws {
        let state = NIOLockedValueBox<[Request]>([])
        self.state = state
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(state: state, responder: responder))
                }
            }
        channel = try await bootstrap.bind(host: "127.0.0.1", port: port).get()
        self.port = channel.localAddress?.port ?? 0
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Every request received so far, in order.
    var requests: [Request] { state.withLockedValue { $0 } }

    func stop() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let state: NIOLockedValueBox<[Request]>
        let responder: Responder
        var head: HTTPRequestHead?
        var body = ByteBuffer()

        init(state: NIOLockedValueBox<[Request]>, responder: @escaping Responder) {
            self.state = state
            self.responder = responder
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body.clear()
            case .body(var chunk):
                body.writeBuffer(&chunk)
            case .end:
                guard let head else { return }
                let request = Request(
                    method: head.method.rawValue,
                    uri: head.uri,
                    headers: head.headers.map { ($0.name, $0.value) },
                    body: Data(body.readableBytesView)
                )
                let index = state.withLockedValue { list in
                    list.append(request)
                    return list.count - 1
                }
                switch responder(request, index) {
                case .dropConnection:
                    context.close(promise: nil)
                case let .response(status, headers, body, delay):
                    var fields = HTTPHeaders(headers)
                    fields.replaceOrAdd(name: "Content-Length", value: String(body.count))
                    let responseHead = HTTPResponseHead(version: head.version, status: .init(statusCode: status), headers: fields)
                    let send = { [context] in
                        context.write(self.wrapOutboundOut(.head(responseHead)), promise: nil)
                        context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
                        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
                    }
                    if delay == .zero {
                        send()
                    } else {
                        let loopBound = NIOLoopBound(send, eventLoop: context.eventLoop)
                        context.eventLoop.scheduleTask(in: delay) { loopBound.value() }
                    }
                }
            }
        }
    }
}
