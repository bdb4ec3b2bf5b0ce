import AsyncHTTPClient
import DiscfgClient
import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation
import NIOCore
import Testing

/// Watches hold bounded memory: a slow event-stream reader is cut off with the id to
/// resume from, and the number of open watches is capped.
@Suite("API: bounded watches")
struct WatchBoundsTests {
    /// Values large enough that two events never fit the small backlog the tests set.
    static let value = String(repeating: "v", count: 200 * 1024)
    static let changes = 60

    /// A server whose streams hold at most 64 KiB for a reader, with `changes` large values written.
    private func serverWithLargeHistory() async throws -> LiveServer {
        let server = try await LiveServer.start { $0.api.streamBacklogBytes = 64 * 1024 }
        do {
            _ = try await server.put("/v1/c", "")
            for index in 1...Self.changes { _ = try await server.put("/v1/c/keys/k\(index)", Self.value) }
        } catch {
            // Stopped here, as withServer would: its HTTP client must be shut down.
            await server.stop()
            throw error
        }
        return server
    }

    @Test("Server-Sent Events: a slow reader is cut off with an error naming the Last-Event-ID to resume from", .timeLimit(.minutes(1)))
    func slowReaderIsCutOff() async throws {
        try await withServer(try await serverWithLargeHistory()) { server in
            var request = HTTPClientRequest(url: server.baseURL + "/v1/c/watch?fromRevision=1")
            request.headers.add(name: "Accept", value: "text/event-stream")
            let response = try await server.client.execute(request, timeout: .seconds(30))
            #expect(response.status == .ok)
            // Read nothing for a while: the server's socket fills and its writes wait.
            try await Task.sleep(for: .seconds(1))
            var ids: [Int] = []
            var errors: [String] = []
            var errorIDs: [Int] = []
            var pending = ""
            for try await buffer in response.body {
                pending += String(buffer: buffer)
                while let end = pending.range(of: "\n\n") {
                    let lines = pending[..<end.lowerBound].split(separator: "\n")
                    pending = String(pending[end.upperBound...])
                    let id = lines.first { $0.hasPrefix("id: ") }.flatMap { Int($0.dropFirst(4)) }
                    if lines.contains("event: error") {
                        errors += lines.filter { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
                        if let id { errorIDs.append(id) }
                    } else if let id {
                        ids.append(id)
                    }
                }
            }
            // The stream ended by itself, before every event, after the events it held.
            #expect(!ids.isEmpty)
            #expect(ids.count < Self.changes)
            #expect(ids == Array(1...max(1, ids.count)))
            #expect(errors.count == 1)
            let envelope = try JSONDecoder.discfg().decode(Envelope.self, from: Data((errors.first ?? "{}").utf8))
            #expect(envelope.error?.code == .unavailable)
            #expect(envelope.error?.field == "Last-Event-ID")
            #expect(envelope.error?.message.contains("Last-Event-ID: \(ids.last ?? 0)") == true, "\(envelope.error?.message ?? "")")
            #expect(errorIDs == [ids.last ?? 0], "the error carries the last id sent, so a browser resumes from it")
        }
    }

    // 12 MB of events, cut off and resumed many times: alone it takes seconds, but beside
    // the rest of the suite on two cores it has taken over a minute.
    @Test("Server-Sent Events: the Swift client resumes after being cut off and sees every event once", .timeLimit(.minutes(3)))
    func clientResumesAfterCutOff() async throws {
        try await withServer(try await serverWithLargeHistory()) { server in
            let store = try RemoteStore(url: URL(string: server.baseURL)!, token: nil)
            var revisions: [UInt64] = []
            for try await event in await store.watch(try ConfigName("c"), scope: .prefix(.root), from: Revision(1)) {
                #expect(event.item?.value.count == Self.value.utf8.count)
                revisions.append(event.revision.rawValue)
                // A slow consumer.
                if revisions.count == 1 { try await Task.sleep(for: .seconds(1)) }
                if revisions.count == Self.changes { break }
            }
            #expect(revisions == (1...UInt64(Self.changes)).map { $0 })
            let metrics = try await server.get("/metrics").text
            let streams = metrics.split(separator: "\n")
                .filter { $0.hasPrefix("discfg_http_requests_total{") && $0.contains("/watch") && $0.contains("200") }
                .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
                .reduce(0, +)
            #expect(streams > 1, "the client was cut off and reconnected:\n\(metrics)")
        }
    }

    @Test("watches over the cap are answered 503 with Retry-After, until one ends", .timeLimit(.minutes(1)))
    func watchCap() async throws {
        try await withServer(try await LiveServer.start { $0.api.maxWatches = 1 }) { server in
            _ = try await server.put("/v1/c", "")
            // Its own client, so shutting it down closes the stream's connection.
            let streamClient = HTTPClient(eventLoopGroupProvider: .singleton)
            // A client not shut down stops the test process when it is freed.
            do {
                var request = HTTPClientRequest(url: server.baseURL + "/v1/c/watch?heartbeat=1")
                request.headers.add(name: "Accept", value: "text/event-stream")
                let stream = try await streamClient.execute(request, timeout: .seconds(30))
                #expect(stream.status == .ok)

                let refused = try await server.get("/v1/c/watch?timeout=1")
                #expect(refused.status == 503)
                #expect(refused.headers["Retry-After"].first == "1")
                #expect(try refused.envelope().error?.code == .unavailable)
                var refusedStream = HTTPClientRequest(url: server.baseURL + "/v1/c/watch")
                refusedStream.headers.add(name: "Accept", value: "text/event-stream")
                #expect(try await server.client.execute(refusedStream, timeout: .seconds(10)).status == .serviceUnavailable)
                #expect(try await server.get("/v1/c").status == 200, "other requests are not capped")
            } catch {
                try? await streamClient.shutdown()
                throw error
            }
            // Leave the stream: its next heartbeat fails and frees the slot.
            try await streamClient.shutdown()
            try await eventually("the left stream's slot is freed", timeout: .seconds(60), interval: .milliseconds(200)) {
                try await server.get("/v1/c/watch?timeout=1").status == 200
            }
        }
    }
}
