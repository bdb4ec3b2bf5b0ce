import DiscfgAPI
import DiscfgAWS
import DiscfgClient
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// The client against an API the way API Gateway presents it: IAM-signed requests, and
/// whole responses only (no Server-Sent Events).
@Suite("Client: an API behind API Gateway")
struct GatewayClientTests {
    /// A request context like the Lambda function's: no streaming.
    struct BufferedContext: DiscfgRequestContext {
        var coreContext: CoreRequestContextStorage
        var supportsStreaming: Bool { false }
        init(source: ApplicationRequestContextSource) { coreContext = CoreRequestContextStorage(source: source) }
    }

    /// The requests a gateway received, as header name → value (plus `path`).
    final class Recorder: Sendable {
        private let requests = Mutex<[[String: String]]>([])
        func append(_ request: [String: String]) { requests.withLock { $0.append(request) } }
        var all: [[String: String]] { requests.withLock { $0 } }
    }

    /// Remembers the signing headers of every request.
    struct RecordingMiddleware: RouterMiddleware {
        typealias Context = BufferedContext
        let seen: Recorder

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            var fields: [String: String] = ["path": request.uri.description, "method": request.method.rawValue]
            for field in request.headers { fields[field.name.canonicalName] = field.value }
            fields["host"] = request.head.authority
            seen.append(fields)
            return try await next(request, context)
        }
    }

    final class Gateway: TestServer {
        let port: Int
        let seen: Recorder
        let group: ServiceGroup
        let task: Task<Void, any Error>
        let store: MemoryStore

        init(port: Int, seen: Recorder, group: ServiceGroup, task: Task<Void, any Error>, store: MemoryStore) {
            self.port = port
            self.seen = seen
            self.group = group
            self.task = task
            self.store = store
        }

        static func start() async throws -> Gateway {
            let store = MemoryStore()
            let recorder = RecordingMiddleware(seen: Recorder())
            let router = Router(context: BufferedContext.self)
            router.add(middleware: recorder)
            ConfigAPI(store: store, authenticator: .open).register(on: router)
            var logger = Logger(label: "gateway-test")
            logger.logLevel = .critical
            let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
            let app = Application(
                router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: logger
            )
            let group = ServiceGroup(services: [app], logger: logger)
            let task = Task { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw DiscfgError(.unavailable, "the gateway did not start") }
            return Gateway(port: port, seen: recorder.seen, group: group, task: task, store: store)
        }

        func stop() async {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
        }
    }

    struct FixedCredentials: CredentialProvider {
        var name: String { "fixed" }
        func credentials() async throws -> AWSCredentials {
            AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret", sessionToken: "session-token")
        }
    }

    @Test("API Gateway and Function URL hosts, and ?sigv4=REGION, are recognised for signing")
    func signingTargets() throws {
        let api = try #require(AWSRequestSigning.target(for: URL(string: "https://abc123.execute-api.eu-west-1.amazonaws.com")!))
        #expect(api.region == "eu-west-1" && api.service == "execute-api")
        let functionURL = try #require(AWSRequestSigning.target(for: URL(string: "https://xyz.lambda-url.us-east-2.on.aws/")!))
        #expect(functionURL.region == "us-east-2" && functionURL.service == "lambda")
        let custom = try #require(AWSRequestSigning.target(for: URL(string: "https://config.example.com/prod?sigv4=ap-south-1")!))
        #expect(custom.region == "ap-south-1" && custom.service == "execute-api")
        #expect(custom.url.absoluteString == "https://config.example.com/prod")
        #expect(AWSRequestSigning.target(for: URL(string: "http://127.0.0.1:8899")!) == nil)
        #expect(AWSRequestSigning.target(for: URL(string: "https://config.example.com")!) == nil)
    }

    @Test("a signing client sends SigV4 for execute-api, with the session token, and no bearer token")
    func signsRequests() async throws {
        let gateway = try await Gateway.start()
        let signing = AWSRequestSigning(region: "us-east-1", service: "execute-api", credentials: FixedCredentials())
        let store = try RemoteStore(url: URL(string: "http://127.0.0.1:\(gateway.port)")!, token: nil, signing: signing)
        _ = try await store.createConfig(try ConfigName("app"), settings: ConfigSettings())
        _ = try await store.set(try Key("/db/host name"), to: Data("db1".utf8), in: try ConfigName("app"))
        #expect(try await store.get(try Key("/db/host name"), in: try ConfigName("app"))?.value == Data("db1".utf8))
        await gateway.stop()

        let seen = gateway.seen.all
        #expect(seen.count == 3)
        for request in seen {
            let authorization = try #require(request["authorization"], "unsigned: \(request)")
            #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"))
            #expect(authorization.contains("/us-east-1/execute-api/aws4_request"))
            #expect(authorization.contains("SignedHeaders=") && authorization.contains("host") && !authorization.contains("user-agent"))
            #expect(request["x-amz-date"] != nil)
            #expect(request["x-amz-security-token"] == "session-token")
        }
        // The signature covers exactly what was sent: recompute it from the request as received.
        let put = try #require(seen.first { $0["path"]?.contains("/keys/") == true && $0["method"] == "PUT" })
        let date = try #require(put["x-amz-date"].flatMap(AWSTimestamp.parse))
        let signedNames = try #require(put["authorization"]?.split(separator: "SignedHeaders=").last?.split(separator: ",").first).split(separator: ";").map(String.init)
        let headers = signedNames.filter { $0 != "x-amz-date" && $0 != "x-amz-security-token" }.map { HTTPHeaderField(name: $0, value: put[$0] ?? "") }
        let path = try #require(put["path"])
        let expected = SigV4Signer(region: "us-east-1", service: "execute-api").sign(
            SigV4Request(method: "PUT", url: try #require(URL(string: "http://127.0.0.1:\(gateway.port)" + path)), headers: headers),
            payload: .bytes(Data("db1".utf8)), credentials: try await FixedCredentials().credentials(), date: date
        )
        #expect(expected.authorization == put["authorization"], "\(put)")
        let get = try #require(seen.first { $0["method"] == "GET" })
        #expect(get["authorization"] != put["authorization"])
    }

    @Test("watch falls back to long polling when the server cannot stream, and sees each change once")
    func watchByPolling() async throws {
        try await withServer(try await Gateway.start()) { gateway in
            let store = try RemoteStore(url: URL(string: "http://127.0.0.1:\(gateway.port)")!, token: nil)
            let config = try ConfigName("app")
            _ = try await store.createConfig(config, settings: ConfigSettings())
            _ = try await store.set(try Key("/a"), to: Data("1".utf8), in: config)
            let stream = await store.watch(config, scope: .prefix(.root), from: Revision(1))
            var revisions: [UInt64] = []
            for try await event in stream {
                revisions.append(event.revision.rawValue)
                if revisions.count == 5 { break }
                // Each change is made once the one before has arrived: while the client polls.
                _ = try await store.set(try Key("/a"), to: Data(String(revisions.count + 1).utf8), in: config)
            }
            #expect(revisions == [1, 2, 3, 4, 5])
            let watches = gateway.seen.all.filter { $0["path"]?.contains("/watch") == true }
            #expect(watches.first?["accept"] == "text/event-stream", "the client tries streaming first")
            #expect(watches.dropFirst().allSatisfy { $0["accept"] == nil }, "then long-polls")
        }
    }
}
