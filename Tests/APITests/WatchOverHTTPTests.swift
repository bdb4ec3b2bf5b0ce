import AsyncHTTPClient
import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation
import NIOCore
import Testing

@Suite("API: watch over HTTP")
struct WatchOverHTTPTests {
    @Test("long poll: returns past events at once, waits for the next one, times out empty", .timeLimit(.minutes(1)))
    func longPoll() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/a", "1")
            _ = try await server.put("/v1/c/keys/b", "2")
            let past = try await server.get("/v1/c/watch?fromRevision=1").envelope()
            #expect(past.events?.map(\.revision) == [1, 2])
            #expect(past.revision == 2)

            async let waiting = server.get("/v1/c/watch?key=/a&fromRevision=3&timeout=10")
            try await Task.sleep(for: .milliseconds(200))
            _ = try await server.put("/v1/c/keys/b", "ignored")
            _ = try await server.put("/v1/c/keys/a", "3")
            let woken = try await waiting.envelope()
            #expect(woken.events?.map(\.key) == ["/a"])
            #expect(woken.events?.map(\.revision) == [4])

            let empty = try await server.get("/v1/c/watch?key=/zzz&fromRevision=5&timeout=1").envelope()
            #expect(empty.events == [])
            #expect(empty.revision == 4)
            #expect(try await server.get("/v1/c/watch?fromRevision=1&key=bad//key").status == 400)
        }
    }

    @Test("Server-Sent Events: every change exactly once across a forced disconnect, resumed with Last-Event-ID", .timeLimit(.minutes(1)))
    func serverSentEvents() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            for index in 1...3 { _ = try await server.put("/v1/c/keys/k\(index)", "v\(index)") }

            // First connection: read three events, then drop the connection.
            let firstIDs = try await readEvents(server, lastEventID: nil, query: "fromRevision=1", count: 3)
            #expect(firstIDs == [1, 2, 3])

            // Changes while disconnected.
            for index in 4...6 { _ = try await server.put("/v1/c/keys/k\(index)", "v\(index)") }

            // Reconnect with Last-Event-ID; write more once connected.
            let (progress, reading) = AsyncStream.makeStream(of: Int.self)
            async let resumed = readEvents(server, lastEventID: 3, query: "", count: 5, progress: reading)
            // Once it has replayed the three changes made while disconnected, it follows.
            for await read in progress where read == 3 { break }
            _ = try await server.put("/v1/c/keys/k7", "v7")
            _ = try await server.request(.DELETE, "/v1/c/keys/k1")
            #expect(try await resumed == [4, 5, 6, 7, 8])
        }
    }

    @Test("Server-Sent Events: each event says who made the change and why", .timeLimit(.minutes(1)))
    func serverSentEventsCarryAttribution() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/db/host", "db2", headers: [("Discfg-Message", "move%20to%20the%20new%20primary")])
            _ = try await server.put("/v1/c/keys/db/port", "5432")
            let events = try await readEventBlocks(server, lastEventID: nil, query: "fromRevision=1", count: 2).map { block in
                let data = try #require(block.split(separator: "\n").first { $0.hasPrefix("data: ") }, "\(block)")
                return try JSONDecoder.discfg().decode(EventDocument.self, from: Data(data.dropFirst(6).utf8))
            }
            #expect(events.map(\.key) == ["/db/host", "/db/port"])
            #expect(events.allSatisfy { $0.by?.kind == .anonymous }, "an open server's caller: \(events.map(\.by))")
            #expect(events.map(\.message) == ["move to the new primary", nil])
        }
    }

    @Test("Server-Sent Events: heartbeats while idle", .timeLimit(.minutes(1)))
    func heartbeats() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            var request = HTTPClientRequest(url: server.baseURL + "/v1/c/watch?heartbeat=1")
            request.headers.add(name: "Accept", value: "text/event-stream")
            let response = try await server.client.execute(request, timeout: .seconds(10))
            #expect(response.headers["Content-Type"].first?.hasPrefix("text/event-stream") == true)
            var text = ""
            for try await buffer in response.body {
                text += String(buffer: buffer)
                if text.components(separatedBy: ": heartbeat").count > 2 { break }
            }
            #expect(text.contains(": heartbeat"))
        }
    }

    /// Reads `count` SSE events and returns their ids (revisions), then disconnects.
    private func readEvents(
        _ server: LiveServer, lastEventID: Int?, query: String, count: Int, progress: AsyncStream<Int>.Continuation? = nil
    ) async throws -> [Int] {
        try await readEventBlocks(server, lastEventID: lastEventID, query: query, count: count, progress: progress).compactMap { block in
            block.split(separator: "\n").first { $0.hasPrefix("id: ") }.flatMap { Int($0.dropFirst(4)) }
        }
    }

    /// Reads `count` SSE events (blocks with an id) as their lines, then disconnects;
    /// tells `progress` how many it has after each.
    private func readEventBlocks(
        _ server: LiveServer, lastEventID: Int?, query: String, count: Int, progress: AsyncStream<Int>.Continuation? = nil
    ) async throws -> [Substring] {
        defer { progress?.finish() }
        var request = HTTPClientRequest(url: server.baseURL + "/v1/c/watch?" + query)
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: String(lastEventID)) }
        let response = try await server.client.execute(request, timeout: .seconds(15))
        var blocks: [Substring] = []
        var pending = ""
        for try await buffer in response.body {
            pending += String(buffer: buffer)
            while let end = pending.range(of: "\n\n") {
                let block = pending[..<end.lowerBound]
                pending = String(pending[end.upperBound...])
                if block.split(separator: "\n").contains(where: { $0.hasPrefix("id: ") }) {
                    blocks.append(block)
                    progress?.yield(blocks.count)
                }
            }
            if blocks.count >= count { break }
        }
        return blocks
    }
}
