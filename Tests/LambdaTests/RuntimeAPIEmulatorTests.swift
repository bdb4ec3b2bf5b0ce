import AsyncHTTPClient
import DiscfgTestSupport
import Foundation
import NIOCore
import Testing

/// The emulator against a tiny runtime client written here, so the Lambda tests' peer is
/// itself known to follow the documented Runtime API.
@Suite("Lambda: Runtime API emulator")
struct RuntimeAPIEmulatorTests {
    /// A minimal custom runtime: next, then response or error.
    struct FakeRuntime {
        struct Next {
            var requestID: String
            var deadlineMs: Int64
            var functionARN: String
            var traceID: String
            var event: Data
        }

        let base: String

        init(_ runtime: RuntimeAPIEmulator) {
            base = "http://\(runtime.address)/2018-06-01/runtime"
        }

        func next() async throws -> Next {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/invocation/next"), timeout: .seconds(30))
            guard response.status.code == 200 else { throw LambdaTestFailure("next answered \(response.status)") }
            let body = try await response.body.collect(upTo: 1 << 20)
            return Next(
                requestID: response.headers.first(name: "Lambda-Runtime-Aws-Request-Id") ?? "",
                deadlineMs: Int64(response.headers.first(name: "Lambda-Runtime-Deadline-Ms") ?? "") ?? 0,
                functionARN: response.headers.first(name: "Lambda-Runtime-Invoked-Function-Arn") ?? "",
                traceID: response.headers.first(name: "Lambda-Runtime-Trace-Id") ?? "",
                event: Data(body.readableBytesView)
            )
        }

        @discardableResult
        func post(_ path: String, _ body: Data, headers: [(String, String)] = []) async throws -> (Int, String) {
            var request = HTTPClientRequest(url: "\(base)/\(path)")
            request.method = .POST
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
            return (Int(response.status.code), text)
        }
    }

    @Test("next blocks until an event is queued and carries the documented headers; the response finishes the invocation")
    func nextAndResponse() async throws {
        let runtime = try await RuntimeAPIEmulator.start()
        let client = FakeRuntime(runtime)
        let polling = Task { try await client.next() }
        let asked = try await runtime.waitForFirstNextRequest(timeout: .seconds(60))
        #expect(asked >= runtime.startedAt)
        let event = Data(#"{"hello":"world"}"#.utf8)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        async let answer = runtime.invocation(eventJSON: event, deadline: .seconds(7))
        let next = try await polling.value
        #expect(next.event == event)
        #expect(!next.requestID.isEmpty)
        #expect(next.functionARN == runtime.functionARN)
        #expect(next.traceID.hasPrefix("Root=1-"))
        #expect(next.deadlineMs >= before + 7_000 && next.deadlineMs <= before + 9_000, "deadline is 7 s from the invocation")
        let (status, _) = try await client.post("invocation/\(next.requestID)/response", Data(#"{"ok":true}"#.utf8))
        #expect(status == 202)
        let invocation = try await answer
        #expect(invocation.requestID == next.requestID)
        #expect(invocation.result == .response(Data(#"{"ok":true}"#.utf8)))
        #expect(invocation.deliveredAt <= invocation.finishedAt)
        #expect(await runtime.answerArrivals == [invocation.finishedAt])
        #expect(await runtime.nextRequestCount == 1)

        let (again, body) = try await client.post("invocation/\(next.requestID)/response", Data("{}".utf8))
        #expect(again == 400, "a second answer is refused: \(body)")
        #expect(body.contains("InvalidStateTransition"))
        let (unknown, _) = try await client.post("invocation/no-such-id/response", Data("{}".utf8))
        #expect(unknown == 400)
        #expect(await runtime.protocolViolations.count == 2)
        await runtime.stop()
    }

    @Test("queued events wait for the runtime; errors and init errors are recorded")
    func errorsAndInitErrors() async throws {
        let runtime = try await RuntimeAPIEmulator.start()
        let client = FakeRuntime(runtime)
        async let answer = runtime.invoke(eventJSON: Data("{}".utf8), deadline: .seconds(5))
        let next = try await client.next()
        let failure = Data(#"{"errorMessage":"no handler for this event","errorType":"discfg.UnknownEvent","stackTrace":[]}"#.utf8)
        let (status, _) = try await client.post(
            "invocation/\(next.requestID)/error", failure, headers: [("Lambda-Runtime-Function-Error-Type", "discfg.UnknownEvent")]
        )
        #expect(status == 202)
        #expect(try await answer == .error(type: "discfg.UnknownEvent", message: "no handler for this event"))

        #expect(await runtime.initError == nil)
        let initFailure = Data(#"{"errorMessage":"bad store","errorType":"discfg.InitError","stackTrace":[]}"#.utf8)
        #expect(try await client.post("init/error", initFailure, headers: [("Lambda-Runtime-Function-Error-Type", "discfg.InitError")]).0 == 202)
        let recorded = try await runtime.waitForInitError(timeout: .seconds(60))
        #expect(recorded.type == "discfg.InitError")
        #expect(recorded.message == "bad store")
        #expect(recorded.errorTypeHeader == "discfg.InitError")
        #expect(await runtime.protocolViolations.isEmpty)
        await runtime.stop()
    }

    @Test("an invocation nobody answers fails loudly, saying the runtime never took it")
    func timeout() async throws {
        let runtime = try await RuntimeAPIEmulator.start()
        let error = await #expect(throws: RuntimeAPIEmulator.Failure.self) {
            try await runtime.invoke(eventJSON: Data("{}".utf8), deadline: .seconds(1), timeout: .milliseconds(300))
        }
        #expect(error?.description.contains("never took it") == true, "\(String(describing: error))")
        await runtime.stop()
    }

    @Test("stop ends a waiting next request")
    func stopEndsPolling() async throws {
        let runtime = try await RuntimeAPIEmulator.start()
        let client = FakeRuntime(runtime)
        let polling = Task { try? await client.next() }
        _ = try await runtime.waitForFirstNextRequest(timeout: .seconds(60))
        await runtime.stop()
        _ = await polling.value
    }
}
