@testable import DiscfgAPI
import DiscfgCore
import DiscfgNetwork
import DiscfgTestSupport
import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// The REST connection handler (``ServerConnection``) in a channel of its own, without a
/// socket: the test sends it request parts as the HTTP codec would, plays the router's
/// channel (reading what is handed on, writing its answers), moves the loop's clock, and
/// reads the bytes the client would get (the router's answers through NIO's encoder, those
/// given on the event loop as made whole).
@Suite("REST connection handler")
struct ServerConnectionTests {
    static let idle = TimeAmount.seconds(60)

    /// A connection through `cap`, active, taking the key reads and writes `reads` can.
    static func connect(_ cap: ConnectionCap, idleTimeout: TimeAmount? = idle, reads: KeyReads? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTPResponseEncoder(configuration: .init()))
        try channel.pipeline.syncOperations.addHandler(
            ServerConnection(cap: cap, idleTimeout: idleTimeout, reads: reads, log: nil, peerIsLoopback: true)
        )
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8899)).wait()
        return channel
    }

    static func request(_ uri: String) -> [HTTPServerRequestPart] {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "127.0.0.1:8899")
        return [.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: headers)), .end(nil)]
    }

    /// `parts` arrive in one read from the socket, as the HTTP codec passes them on.
    static func send(_ channel: EmbeddedChannel, _ parts: [HTTPServerRequestPart]) {
        for part in parts { channel.pipeline.syncOperations.fireChannelRead(NIOAny(part)) }
        channel.pipeline.syncOperations.fireChannelReadComplete()
    }

    /// The router's channel answers `status` with `body`.
    static func answer(_ channel: EmbeddedChannel, _ status: HTTPResponseStatus, body: String) throws {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
        try channel.writeOutbound(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: body))))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
    }

    /// What the router's channel was handed.
    static func handedOn(_ channel: EmbeddedChannel) throws -> [HTTPServerRequestPart] {
        var parts: [HTTPServerRequestPart] = []
        while let part = try channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
        return parts
    }

    /// What was written to the client: each answer's head and body, read from the bytes
    /// (every answer here says its Content-Length).
    static func written(_ channel: EmbeddedChannel) throws -> [(head: HTTPResponseHead, body: String)] {
        var bytes: [UInt8] = []
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = data else {
                Issue.record("a file region")
                continue
            }
            bytes += buffer.readableBytesView
        }
        var answers: [(head: HTTPResponseHead, body: String)] = []
        var rest = bytes[...]
        let blankLine = Array("\r\n\r\n".utf8)
        while !rest.isEmpty {
            let end = try #require(rest.indices.first { rest[$0...].starts(with: blankLine) }, "a whole head: \(String(decoding: rest, as: UTF8.self))")
            let lines = String(decoding: rest[..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let status = lines[0].split(separator: " ", maxSplits: 2)
            try #require(status.count >= 2 && status[0] == "HTTP/1.1", "\(lines[0])")
            var headers = HTTPHeaders()
            for line in lines.dropFirst() {
                let colon = try #require(line.firstIndex(of: ":"), "\(line)")
                headers.add(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let length = try #require(headers["Content-Length"].first.flatMap { Int($0) } ?? (status[1] == "304" ? 0 : nil), "\(lines)")
            let bodyStart = end + blankLine.count
            try #require(rest.endIndex - bodyStart >= length, "a whole body")
            let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: try #require(Int(status[1]))), headers: headers)
            answers.append((head, String(decoding: rest[bodyStart..<(bodyStart + length)], as: UTF8.self)))
            rest = rest[(bodyStart + length)...]
        }
        return answers
    }

    @Test("pipelined requests go to the router in order, and its answers leave in that order")
    func pipelined() throws {
        let channel = try Self.connect(ConnectionCap(limit: 8, stallTimeout: .seconds(30)))
        Self.send(channel, Self.request("/v1/a") + Self.request("/v1/b"))
        let uris = try Self.handedOn(channel).compactMap { part -> String? in
            if case .head(let head) = part { head.uri } else { nil }
        }
        #expect(uris == ["/v1/a", "/v1/b"])
        try Self.answer(channel, .ok, body: "a")
        try Self.answer(channel, .notFound, body: "b")
        let answers = try Self.written(channel)
        #expect(answers.map(\.body) == ["a", "b"])
        #expect(answers.map(\.head.status) == [.ok, .notFound])
        #expect(answers.allSatisfy { $0.head.headers["Connection"].isEmpty }, "kept alive")
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    @Test("over the cap a request is answered 503 with Retry-After and the error envelope, and the connection closed")
    func refusedOverTheCap() throws {
        let cap = ConnectionCap(limit: 1, stallTimeout: .seconds(30))
        let first = try Self.connect(cap)
        #expect(cap.openConnections == 1)
        let second = try Self.connect(cap)
        #expect(cap.openConnections == 1, "the refused connection is not counted")
        Self.send(second, Self.request("/healthz") + Self.request("/healthz"))
        #expect(try Self.handedOn(second).isEmpty, "the router never sees it")
        let answers = try Self.written(second)
        try #require(answers.count == 1, "answered once")
        let refusal = answers[0]
        #expect(refusal.head.status == .serviceUnavailable)
        #expect(refusal.head.headers["Retry-After"] == ["1"])
        #expect(refusal.head.headers["Connection"] == ["close"])
        #expect(refusal.head.headers["Content-Length"] == [String(refusal.body.utf8.count)])
        let envelope = try #require(try JSONSerialization.jsonObject(with: Data(refusal.body.utf8)) as? [String: Any])
        let error = try #require(envelope["error"] as? [String: Any])
        #expect(envelope["action"] as? String == "connect")
        #expect(error["code"] as? String == "unavailable")
        #expect((error["message"] as? String)?.contains("--max-connections") == true)
        #expect(!second.isActive, "closed once the refusal is written")

        try first.close().wait()
        #expect(cap.openConnections == 0, "a closed connection frees its place")
        let third = try Self.connect(cap)
        Self.send(third, [Self.request("/healthz")[0]])
        #expect(try Self.handedOn(third).count == 1, "served once a place is free")
        _ = try third.finish()
    }

    @Test("a connection with nothing in flight is closed after the idle timeout; one being answered is not")
    func idle() throws {
        let cap = ConnectionCap(limit: 8, stallTimeout: .seconds(30))
        let channel = try Self.connect(cap)
        Self.send(channel, Self.request("/v1/slow"))
        channel.embeddedEventLoop.advanceTime(by: Self.idle * 2)
        #expect(channel.isActive, "answering a request read whole is not idle")
        try Self.answer(channel, .ok, body: "done")
        channel.embeddedEventLoop.advanceTime(by: Self.idle - .seconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive, "idle for the whole timeout after its answer")
        #expect(cap.openConnections == 0)
    }

    @Test("a request head with no end (a slow body) does not keep the connection from the idle timeout")
    func slowBody() throws {
        let channel = try Self.connect(ConnectionCap(limit: 8, stallTimeout: .seconds(30)))
        Self.send(channel, [Self.request("/v1/upload")[0]])
        channel.embeddedEventLoop.advanceTime(by: Self.idle + .seconds(1))
        #expect(!channel.isActive)
    }

    @Test("shutdown closes an idle connection at once")
    func quiesceIdle() throws {
        let channel = try Self.connect(ConnectionCap(limit: 8, stallTimeout: .seconds(30)))
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!channel.isActive)
    }

    @Test("shutdown lets a busy connection finish its answer, which says Connection: close, then closes; a request sent meanwhile is not served")
    func quiesceBusy() throws {
        let channel = try Self.connect(ConnectionCap(limit: 8, stallTimeout: .seconds(30)))
        Self.send(channel, Self.request("/v1/a"))
        #expect(try Self.handedOn(channel).count == 2)
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(channel.isActive, "the request in flight is answered")
        Self.send(channel, Self.request("/v1/late"))
        #expect(try Self.handedOn(channel).isEmpty, "a request sent after shutdown began goes nowhere")
        try Self.answer(channel, .ok, body: "a")
        let answers = try Self.written(channel)
        #expect(answers.map(\.body) == ["a"])
        #expect(answers.first?.head.headers["Connection"] == ["close"])
        #expect(!channel.isActive)
    }

    @Test("a client that stops reading is disconnected after the stall timeout, one that reads again is not")
    func stall() throws {
        let channel = try Self.connect(ConnectionCap(limit: 8, stallTimeout: .seconds(30)), idleTimeout: nil)
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(20))
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive, "it read again in time")
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(31))
        #expect(!channel.isActive)
    }

    @Test("a key read the views could answer at once waits behind an earlier request with the router, so answers leave in request order")
    func fastReadWaitsItsTurn() async throws {
        let store = MemoryStore()
        let config = try ConfigName("app")
        _ = try await store.createConfig(config, settings: ConfigSettings())
        _ = try await store.set(try Key("/k"), to: Data("v".utf8), in: config)
        let views = ConfigViews(store: store)
        defer { views.close() }
        views.want(config)
        try await eventually("the view of app loads", interval: .milliseconds(10)) {
            if case .miss = views.lookup(keyPath: "/k", configName: "app") { return false }
            return true
        }
        let api = DiscfgServer.api(store: store, authenticator: .open, configuration: DiscfgServer.Configuration())
        let reads = KeyReads(views: views, api: api, logger: Logger(label: "test"))
        let channel = try Self.connect(ConnectionCap(limit: 8, stallTimeout: .seconds(30)), reads: reads)

        Self.send(channel, Self.request("/v1/app/keys/k"))
        #expect(try Self.handedOn(channel).isEmpty, "alone, the read is answered on the event loop")
        let alone = try Self.written(channel)
        #expect(alone.map(\.head.status) == [.ok] && alone.first?.body.contains(#""value""#) == true, "\(alone.map(\.body))")

        Self.send(channel, Self.request("/v1/app") + Self.request("/v1/app/keys/k"))
        let uris = try Self.handedOn(channel).compactMap { part -> String? in
            if case .head(let head) = part { head.uri } else { nil }
        }
        #expect(uris == ["/v1/app", "/v1/app/keys/k"], "behind a request with the router, the read goes to the router too")
        #expect(try Self.written(channel).isEmpty, "nothing overtakes the router's first answer")
        try Self.answer(channel, .ok, body: "config")
        try Self.answer(channel, .ok, body: "key")
        #expect(try Self.written(channel).map(\.body) == ["config", "key"])

        Self.send(channel, Self.request("/v1/app/keys/k"))
        #expect(try Self.handedOn(channel).isEmpty, "with the router done, the event loop answers again")
        #expect(try Self.written(channel).map(\.head.status) == [.ok])
        _ = try channel.finish()
    }
}
