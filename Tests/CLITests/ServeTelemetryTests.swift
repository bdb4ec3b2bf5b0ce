import DiscfgCore
import DiscfgTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

/// `discfg serve --otel-endpoint`: spans exported over OTLP/HTTP to a collector.
@Suite("CLI: serve --otel-endpoint")
struct ServeTelemetryTests {
    @Test("--otel-endpoint refuses what is not an http(s) URL with a host: exit 2, naming the flag")
    func badEndpoint() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        for bad in ["127.0.0.1:4318", "ftp://collector:4318", "http://", "collector"] {
            let refused = try await cli.run("serve", "--port", "0", "--otel-endpoint", bad)
            #expect(refused.status == 2, "\(bad)")
            #expect(refused.stderr.contains("--otel-endpoint"), "\(bad): \(refused.stderr)")
        }
    }

    @Test("a request's spans reach the collector: POSTed to /v1/traces as protobuf, the last batch when the server stops", .timeLimit(.minutes(2)))
    func exportsSpans() async throws {
        let collector = try await OTLPCollector.start()
        defer { collector.stop() }
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve(["--otel-endpoint", "http://127.0.0.1:\(collector.port)"])
        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        #expect(try await remote.run("create", "web").status == 0)
        #expect(await server.kill(SIGTERM) == .exited(0))

        let posts = collector.posts
        #expect(!posts.isEmpty)
        #expect(posts.allSatisfy { $0.path == "/v1/traces" && $0.contentType == "application/x-protobuf" })
        let body = posts.reduce(Data()) { $0 + $1.body }
        // Protobuf keeps strings as their bytes: the service, the request span's attributes and its store call's span.
        for name in ["discfg", "http.route", "store.createConfig", "http.response.status_code"] {
            #expect(body.range(of: Data(name.utf8)) != nil, "\(name) not exported")
        }
    }
}

/// An OTLP/HTTP collector on loopback that keeps what is POSTed to it.
final class OTLPCollector: Sendable {
    struct Post: Sendable {
        var path: String
        var contentType: String?
        var body: Data
    }

    /// What the routes received, shared with them.
    final class Received: Sendable {
        let posts = Mutex<[Post]>([])
    }

    let port: Int
    private let received: Received
    private let server: Task<Void, any Error>

    private init(port: Int, received: Received, server: Task<Void, any Error>) {
        self.port = port
        self.received = received
        self.server = server
    }

    var posts: [Post] { received.posts.withLock { $0 } }

    static func start() async throws -> OTLPCollector {
        let received = Received()
        let router = Router(context: BasicRequestContext.self)
        router.post("/v1/{signal}") { request, context in
            let body = try await request.body.collect(upTo: 16 << 20)
            received.posts.withLock {
                $0.append(Post(path: request.uri.path, contentType: request.headers[.contentType], body: Data(buffer: body)))
            }
            // An empty ExportTraceServiceResponse: every span accepted.
            return Response(status: .ok, headers: [.contentType: "application/x-protobuf"])
        }
        let (port, server) = try await LoopbackApplication.start(router, name: "the OTLP collector")
        return OTLPCollector(port: port, received: received, server: server)
    }

    func stop() {
        server.cancel()
    }
}
