import Foundation
import Hummingbird
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The outside a deployment's signals are read from, on a free loopback port: a health
/// endpoint, and an AWS endpoint that misbehaves in the ways the tests name.
///
/// - `GET /status/CODE` answers `CODE` with an empty body;
/// - `GET /redirect?to=URL` answers 301 with `Location: URL` (without `to`, itself);
/// - `POST /aws/forbidden` answers 403 `AccessDenied`, `/aws/throttled` 400 `Throttling`,
///   `/aws/unavailable` 503, `/aws/garbage` 200 with a body that is not JSON, and
///   `/aws/vanish` starts a 200 answer and closes the connection in its middle; each
///   counts its requests (``requests(_:)``); `/aws/paged` answers `DescribeAlarms` in two
///   pages, a composite alarm in the second (see `paged`). An AWS client given `BASE/aws/NAME` as its
///   endpoint posts there.
public final class SignalPeer: TestServer {
    /// The loopback port.
    public let port: Int
    private let server: Task<Void, any Error>
    private let tally: Tally

    /// `http://127.0.0.1:PORT`.
    public var base: String { "http://127.0.0.1:\(port)" }

    /// The requests `POST /aws/NAME` has had.
    public func requests(_ name: String) -> Int { tally.requests.withLock { $0[name, default: 0] } }

    private final class Tally: Sendable {
        let requests = Mutex<[String: Int]>([:])
    }

    private init(port: Int, server: Task<Void, any Error>, tally: Tally) {
        self.port = port
        self.server = server
        self.tally = tally
    }

    /// Starts the peer.
    public static func start() async throws -> SignalPeer {
        let tally = Tally()
        let router = Router()
        router.get("/status/{code}") { _, context -> Response in
            let code = try context.parameters.require("code", as: Int.self)
            return Response(status: HTTPResponse.Status(code: code))
        }
        router.get("/redirect") { request, _ -> Response in
            let target = request.uri.queryParameters["to"].map(String.init) ?? "/redirect"
            return Response(status: .movedPermanently, headers: [.location: target])
        }
        router.post("/aws/{name}") { request, context -> Response in
            let name = try context.parameters.require("name")
            tally.requests.withLock { $0[name, default: 0] += 1 }
            switch name {
            case "paged":
                let body = try await request.body.collect(upTo: 1 << 20)
                return paged(Data(body.readableBytesView))
            case "forbidden":
                return awsError(.forbidden, "AccessDenied", "User is not authorized to perform: cloudwatch:DescribeAlarms")
            case "throttled":
                return awsError(.badRequest, "Throttling", "Rate exceeded")
            case "unavailable":
                return awsError(.serviceUnavailable, "ServiceUnavailable", "Service is unavailable")
            case "garbage":
                return Response(status: .ok, headers: [.contentType: "text/html"], body: ResponseBody(byteBuffer: ByteBuffer(string: "<html>a captive portal</html>")))
            case "vanish":
                return Response(status: .ok, body: ResponseBody(contentLength: 4096) { writer in
                    try await writer.write(ByteBuffer(string: "{\"MetricAlarms\": ["))
                    throw CancellationError()
                })
            default:
                return Response(status: .notFound)
            }
        }
        let (port, server) = try await LoopbackApplication.start(router, name: "signal-peer")
        return SignalPeer(port: port, server: server, tally: tally)
    }

    /// `DescribeAlarms` as CloudWatch answers it, in two pages: the metric alarm
    /// `checkout-5xx` (ALARM) with a `NextToken`, then, when the request names
    /// `CompositeAlarm` in `AlarmTypes` (CloudWatch's default is metric alarms only), the
    /// composite alarm `site-down` (INSUFFICIENT_DATA).
    private static func paged(_ body: Data) -> Response {
        let input = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        let types = input["AlarmTypes"] as? [String] ?? ["MetricAlarm"]
        let answer: String
        if input["NextToken"] as? String == "page-2" {
            answer = types.contains("CompositeAlarm")
                ? #"{"MetricAlarms": [], "CompositeAlarms": [{"AlarmName": "site-down", "AlarmRule": "ALARM(checkout-5xx)", "StateValue": "INSUFFICIENT_DATA", "StateReason": "Unchecked: Initial alarm creation"}]}"#
                : #"{"MetricAlarms": [], "CompositeAlarms": []}"#
        } else {
            answer = #"{"MetricAlarms": [{"AlarmName": "checkout-5xx", "StateValue": "ALARM", "StateReason": "Threshold Crossed: 1 datapoint [12.0] was greater than the threshold (5.0)."}], "NextToken": "page-2"}"#
        }
        return Response(status: .ok, headers: [.contentType: "application/x-amz-json-1.0"], body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
    }

    private static func awsError(_ status: HTTPResponse.Status, _ type: String, _ message: String) -> Response {
        let body = #"{"__type": "\#(type)", "message": "\#(message)"}"#
        return Response(status: status, headers: [.contentType: "application/x-amz-json-1.0"], body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    /// Stops the peer and waits until it has.
    public func stop() async {
        server.cancel()
        _ = await server.result
    }
}

/// A loopback port that takes connections and never answers: the kernel completes each
/// handshake and keeps what is sent, and nothing ever reads it.
public final class SilentPort: TestServer {
    /// The loopback port.
    public let port: Int
    private let descriptor: Int32

    /// Binds a free loopback port and listens on it.
    public init() throws {
        (descriptor, port) = try listeningLoopbackSocket()
    }

    /// Closes the port.
    public func stop() async {
        close(descriptor)
    }
}

/// A loopback port whose first connection is answered 200 with a body of 100 MB,
/// whatever it asked, sent through a socket buffer of 64 KiB, so that what it sent is
/// close to what the reader read: ``bytesSent()`` tells how much went before the reader
/// closed the connection (or all of it, if it read it all).
public final class HugeBodyPort: TestServer {
    /// The size of the body.
    public static let bodyBytes = 100_000_000

    /// The loopback port.
    public let port: Int
    private let descriptor: Int32
    private let served: Task<Int, Never>

    /// Binds a free loopback port and serves its first connection on a thread of its own.
    public init() throws {
        let (descriptor, port) = try listeningLoopbackSocket()
        self.descriptor = descriptor
        self.port = port
        served = Task { await BlockingCall.run { Self.serve(descriptor) } }
    }

    /// The bytes of the body sent before the connection closed; -1 when none came.
    public func bytesSent() async -> Int {
        await served.value
    }

    /// Closes the port and waits for its thread.
    public func stop() async {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
        _ = await served.value
    }

    private static func serve(_ listener: Int32) -> Int {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return -1 }
        defer { close(connection) }
        var size: Int32 = 64 << 10
        setsockopt(connection, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var request = [UInt8](repeating: 0, count: 64 << 10)
        guard recv(connection, &request, request.count, 0) > 0 else { return -1 }
        let head = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(bodyBytes)\r\n\r\n".utf8)
        guard send(connection, head, head.count, Int32(MSG_NOSIGNAL)) == head.count else { return 0 }
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 << 10)
        var sent = 0
        while sent < bodyBytes {
            let written = send(connection, chunk, min(chunk.count, bodyBytes - sent), Int32(MSG_NOSIGNAL))
            guard written > 0 else { break }
            sent += written
        }
        return sent
    }
}

/// A socket listening on a free loopback port, and the port.
private func listeningLoopbackSocket() throws -> (Int32, Int) {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw MotoServer.StartError(description: "socket() failed") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard bound == 0, named == 0, listen(fd, 16) == 0 else {
        close(fd)
        throw MotoServer.StartError(description: "cannot listen on a loopback port")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
