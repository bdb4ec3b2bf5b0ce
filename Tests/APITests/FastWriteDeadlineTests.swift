@testable import DiscfgAPI
import DiscfgCore
import DiscfgSQLite
import DiscfgTestSupport
import DiscfgWire
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// A plain `PUT` the event loop hands to the store has the deadline every routed request
/// has, and a store that cannot answer fails it within that deadline: 503 `unavailable`,
/// the store's own words kept in the log.
@Suite("serve: the event loop's writes have the request deadline")
struct FastWriteDeadlineTests {
    /// A store whose writes never reach their table, as DynamoDB's do with its endpoint
    /// gone: each waits out the deadline it was given (as the AWS client fits its retries
    /// inside it) and then fails as the store does. Without a deadline it waits an hour.
    final class DeadStore: ForwardingStore {
        let base: any ConfigStore
        var forwardee: any ConfigStore { base }
        /// The deadline each write was given.
        let deadlines = Mutex<[Deadline?]>([])

        init(_ base: any ConfigStore) {
            self.base = base
        }

        func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
            let deadline = Deadline.current
            deadlines.withLock { $0.append(deadline) }
            try await Task.sleep(until: deadline?.instant ?? .now + .seconds(3600), clock: .continuous)
            throw DiscfgError(.unavailable, "DynamoDB at http://127.0.0.1:1 did not answer: connection refused", field: "store")
        }
    }

    @Test("a dead store answers 503 unavailable within the request timeout, its words not shown")
    func deadStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-deadline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sqlite = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
        _ = try await sqlite.createConfig(try ConfigName("app"), settings: ConfigSettings())
        let store = DeadStore(sqlite)
        var configuration = DiscfgServer.Configuration()
        configuration.api.requestTimeout = .milliseconds(300)
        let api = DiscfgServer.api(store: store, authenticator: .open, configuration: configuration)
        let views = ConfigViews(store: store)
        defer { views.close() }
        let reads = KeyReads(views: views, api: api, logger: Logger(label: "test"))

        let head = HTTPRequestHead(
            version: .http1_1, method: .PUT, uri: "/v1/app/keys/db/host", headers: ["Host": "127.0.0.1:8899", "Content-Length": "3"]
        )
        let candidate = try #require(reads.candidate(head, now: .now()))
        let write = try #require(reads.write(candidate, body: ByteBuffer(string: "db1"), peerIsLoopback: true))
        let start = ContinuousClock.now
        let result = await reads.commit(write)
        let answer = reads.answer(write: result, write, candidate: candidate, log: nil)
        let end = ContinuousClock.now

        // The store was given the routed requests' deadline, and the write ended with it.
        let given = try #require(store.deadlines.withLock { $0 }.first ?? nil)
        #expect(given.instant >= start + configuration.api.requestTimeout && given.instant <= end)
        #expect(answer.head.status == .serviceUnavailable)
        let fields = answer.head.response(body: answer.body).headerFields
        #expect(fields[.contentType] == APIResponse.jsonContentType)
        #expect(fields[.contentLength] == String(answer.body.readableBytes))
        let envelope = try JSONDecoder.discfg().decode(Envelope.self, from: Data(answer.body.readableBytesView))
        #expect(envelope.action == "set" && envelope.error?.code == .unavailable)
        #expect(envelope.error?.message.contains("DynamoDB") == false)
    }

    @Test("a write that fits its deadline is answered as the router answers it")
    func liveStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-deadline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
        _ = try await store.createConfig(try ConfigName("app"), settings: ConfigSettings())
        let api = DiscfgServer.api(store: store, authenticator: .open, configuration: DiscfgServer.Configuration())
        let views = ConfigViews(store: store)
        defer { views.close() }
        let reads = KeyReads(views: views, api: api, logger: Logger(label: "test"))
        let head = HTTPRequestHead(version: .http1_1, method: .PUT, uri: "/v1/app/keys/k", headers: ["Host": "localhost", "Content-Length": "1"])
        let candidate = try #require(reads.candidate(head, now: .now()))
        let write = try #require(reads.write(candidate, body: ByteBuffer(string: "v"), peerIsLoopback: true))
        let answer = reads.answer(write: await reads.commit(write), write, candidate: candidate, log: nil)
        #expect(answer.head.status == .created && answer.head.response(body: answer.body).headerFields[.eTag] == "\"1\"")
        // As HTTP/1 sends it: dated, and naming the server, as the router's answers are.
        var wire = ResponseHeads.Wire()
        let bytes = String(buffer: wire.write(answer.head, body: answer.body, closing: false, second: 0))
        #expect(bytes.hasPrefix("HTTP/1.1 201 Created\r\nETag: \"1\"\r\n"), "\(bytes)")
        #expect(bytes.contains("\r\nServer: discfg\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n{"), "\(bytes)")
        #expect(bytes.hasSuffix(String(buffer: answer.body)) && bytes.contains("\r\nContent-Length: \(answer.body.readableBytes)\r\n"))
    }

    @Test("a change's answer, written without fields, is byte for byte the head its fields give", arguments: [false, true])
    func changeHeadAsItsFields(closing: Bool) {
        var wire = ResponseHeads.Wire()
        let changes: [(ResponseHeads.WriteHead, String)] = [
            (.change(.created, etag: "\"1\""), "{\"a\":1}"), (.change(.ok, etag: "\"18446744073709551615\""), ""),
        ]
        for (head, body) in changes {
            let body = ByteBuffer(string: body)
            let direct = wire.write(head, body: body, closing: closing, second: 1_700_000_000)
            let viaFields = wire.answer(head.response(body: body), body: body, closing: closing, second: 1_700_000_000)
            #expect(String(buffer: direct) == String(buffer: viaFields))
        }
    }
}
