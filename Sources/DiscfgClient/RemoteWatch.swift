import AsyncHTTPClient
import DiscfgAWS
import DiscfgCore
import DiscfgWire
import Foundation
import NIOCore

/// A watch over the server's Server-Sent Events that survives dropped connections:
/// it reconnects with backoff and resumes right after the last event it delivered
/// (``ResumePoint``, exact inside a transaction's events), so the consumer sees every
/// event exactly once.
struct RemoteWatch: Sendable {
    let transport: HTTPTransport
    let configPath: String
    let scope: WatchScope
    let from: Revision?

    /// The events, until the consumer stops or the server reports an error such as
    /// `compacted` or `configNotFound`.
    func stream() -> AsyncThrowingStream<Event, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var next = from.map { ResumePoint(from: $0) }
                var failures = 0
                var polling = false
                while !Task.isCancelled {
                    if next == nil {
                        // Pin "now" once, so a reconnect resumes from it rather than from a later "now".
                        do {
                            next = ResumePoint(from: try await RemoteStore.configInfo(transport, path: configPath).revision.next)
                        } catch let error as DiscfgError where error.code != .unavailable {
                            continuation.finish(throwing: error)
                            return
                        } catch {}
                    }
                    do {
                        if polling {
                            try await poll(from: &next, resetFailures: { failures = 0 }) { continuation.yield($0) }
                        } else {
                            try await follow(from: &next, resetFailures: { failures = 0 }) { continuation.yield($0) }
                        }
                    } catch is StreamingRefused {
                        // Behind API Gateway: responses are buffered, so long-poll instead.
                        polling = true
                        continue
                    } catch let error as DiscfgError where error.code != .unavailable {
                        continuation.finish(throwing: error)
                        return
                    } catch is CancellationError {
                        break
                    } catch {
                        // A dropped or refused connection: try again, backing off (RetryPolicy.reconnect).
                    }
                    let policy = RetryPolicy.reconnect
                    do { try await policy.sleep(policy.delay(forRetry: failures)) } catch { break }
                    failures += 1
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// One connection: deliver events until it ends, advancing `next`.
    private func follow(from next: inout ResumePoint?, resetFailures: () -> Void, deliver: (Event) -> Void) async throws {
        guard let point = next else { throw DiscfgError(.unavailable, "no start revision yet") }
        let start = point.revision
        let headers = [("Accept", "text/event-stream")]
        let query = RemoteStore.scopeQuery(scope, from: start, extra: [("heartbeat", "10")])
        let request = try await transport.makeRequest(.GET, configPath + "/watch" + query, headers: headers)
        let response: HTTPClientResponse
        do {
            response = try await transport.client.execute(request, deadline: .distantFuture)
        } catch {
            throw HTTPTransport.unreachable(transport.baseURL, error)
        }
        if response.status == .notAcceptable { throw StreamingRefused() }
        guard response.status == .ok else {
            let body = try await response.body.collect(upTo: 1024 * 1024)
            _ = try HTTPTransport.decode(HTTPTransport.Reply(status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView)), baseURL: transport.baseURL)
            throw DiscfgError(.unavailable, "the server answered \(response.status.code) to a watch")
        }
        resetFailures()
        var parser = ServerSentEventParser()
        var replay = point.replay()
        let decoder = JSONDecoder.discfg()
        for try await buffer in response.body {
            for message in parser.feed(String(buffer: buffer)) {
                if message.event == "error" {
                    let envelope = try decoder.decode(Envelope.self, from: Data(message.data.utf8))
                    if let error = envelope.error { throw DiscfgError(error.code, error.message, field: error.field) }
                    continue
                }
                let event = try decoder.decode(EventDocument.self, from: Data(message.data.utf8)).event()
                // Never deliver twice: the server replays the resumed revision whole.
                guard replay.admit(event) else { continue }
                deliver(event)
                next = replay.point
            }
        }
        throw DiscfgError(.unavailable, "the watch connection ended")
    }

    /// The server cannot stream (API Gateway); watch by long polling.
    private struct StreamingRefused: Error {}

    /// Long polls, delivering events and advancing `next`, until a poll fails.
    private func poll(from next: inout ResumePoint?, resetFailures: () -> Void, deliver: (Event) -> Void) async throws {
        while !Task.isCancelled {
            guard let point = next else { throw DiscfgError(.unavailable, "no start revision yet") }
            let start = point.revision
            let query = RemoteStore.scopeQuery(scope, from: start, extra: [("timeout", "20"), ("limit", "500")])
            let envelope = try await transport.envelope(.GET, configPath + "/watch" + query, timeout: .seconds(40))
            resetFailures()
            var replay = point.replay()
            for document in envelope.events ?? [] {
                let event = try document.event()
                guard replay.admit(event) else { continue }
                deliver(event)
            }
            // A page holds whole revisions: everything through it has been seen.
            if let through = envelope.revision { replay.complete(through: through) }
            next = replay.point
        }
        throw CancellationError()
    }
}
