import AsyncHTTPClient
@testable import DiscfgLambda
import DiscfgTestSupport
import Foundation
import NIOCore
import Synchronization
import Testing

/// The extension loop against the Extensions API emulator, with a workload written here
/// whose phases the tests control and record.
@Suite("Lambda: extension loop")
struct ExtensionLoopTests {
    /// Records what the loop asked of it; `load` and `refresh` take as long as the test says.
    final class RecordingWorkload: ExtensionWorkload {
        struct Log {
            var loadedAt: ContinuousClock.Instant?
            var refreshesStarted = 0
            var refreshesFinished = 0
            var shutdownAt: ContinuousClock.Instant?
        }

        let log = Mutex(Log())
        let loadTime: Duration
        let refreshTime: Duration
        let loadError: (any Error)?

        init(loadTime: Duration = .zero, refreshTime: Duration = .zero, loadError: (any Error)? = nil) {
            self.loadTime = loadTime
            self.refreshTime = refreshTime
            self.loadError = loadError
        }

        func load() async throws {
            try await Task.sleep(for: loadTime)
            if let loadError { throw loadError }
            log.withLock { $0.loadedAt = .now }
        }

        func refreshInBackground() async {
            log.withLock { $0.refreshesStarted += 1 }
            try? await Task.sleep(for: refreshTime)
            log.withLock { $0.refreshesFinished += 1 }
        }

        func shutdown() async {
            log.withLock { $0.shutdownAt = .now }
        }
    }

    /// Runs the loop against a fresh emulator; returns the emulator and the loop's task.
    static func start(_ workload: RecordingWorkload) async throws -> (ExtensionsAPIEmulator, Task<Int32, Never>) {
        let api = try await ExtensionsAPIEmulator.start()
        let environment = ["AWS_LAMBDA_RUNTIME_API": api.address, "DISCFG_LOG_LEVEL": "critical"]
        let loop = Task { await LambdaExtension.run(name: "discfg-agent", environment: environment) { _ in workload } }
        return (api, loop)
    }

    @Test("registers by name for INVOKE and SHUTDOWN, loads before its first event/next, and exits 0 on SHUTDOWN")
    func lifecycle() async throws {
        let workload = RecordingWorkload(loadTime: .milliseconds(300))
        let (api, loop) = try await Self.start(workload)
        let firstNext = try await api.waitForFirstNextRequest()
        let registrations = await api.registrations
        #expect(registrations.map(\.name) == ["discfg-agent"])
        #expect(registrations.first?.events == ["INVOKE", "SHUTDOWN"])
        let loadedAt = try #require(workload.log.withLock { $0.loadedAt })
        #expect(loadedAt < firstNext, "the load finished before the first event/next")
        #expect(await api.calls.map(\.route) == [.register, .next])
        #expect(await api.calls.last?.identifier == registrations.first?.identifier)

        try await api.invoke()
        try await api.invoke()
        try await api.shutdown(deadline: .seconds(2))
        #expect(await loop.value == 0)
        #expect(workload.log.withLock { $0.shutdownAt } != nil)
        #expect(await api.deliveries.map(\.kind) == [.invoke, .invoke, .shutdown])
        #expect(await api.protocolViolations.isEmpty)
        await api.stop()
    }

    @Test("each INVOKE is followed by event/next at once, however long the refresh it starts takes")
    func invokesAreNotHeld() async throws {
        let workload = RecordingWorkload(refreshTime: .seconds(2))
        let (api, loop) = try await Self.start(workload)
        _ = try await api.waitForFirstNextRequest()
        for _ in 0..<3 {
            let delivery = try await api.invoke()
            let held = try #require(delivery.heldFor)
            #expect(held < .milliseconds(500), "event/next came \(held) after the INVOKE")
        }
        #expect(workload.log.withLock { $0.refreshesStarted } == 3)
        #expect(workload.log.withLock { $0.refreshesFinished } == 0, "the refreshes were still running")
        try await api.shutdown()
        #expect(await loop.value == 0)
        await api.stop()
    }

    @Test("a load that fails is reported as init/error, and the loop exits 1 without asking for events")
    func initError() async throws {
        struct Unreachable: Error, CustomStringConvertible {
            var description: String { "the store at dynamodb://us-east-1/t is unreachable and no cache exists" }
        }
        let workload = RecordingWorkload(loadError: Unreachable())
        let (api, loop) = try await Self.start(workload)
        let error = try await api.waitForError(.initError)
        #expect(error.type == LambdaExtension.initErrorType)
        #expect(error.errorTypeHeader == LambdaExtension.initErrorType)
        #expect(error.message.contains("unreachable"))
        #expect(await loop.value == 1)
        #expect(await api.calls.map(\.route) == [.register, .initError])
        await api.stop()
    }

    @Test("a shutdown that hangs is given up before the SHUTDOWN deadline")
    func shutdownDeadline() async throws {
        final class Hanging: ExtensionWorkload {
            func load() async throws {}
            func refreshInBackground() async {}
            func shutdown() async {
                // Ignores cancellation on purpose.
                let end = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < end { try? await Task.sleep(for: .milliseconds(50)) }
            }
        }
        let api = try await ExtensionsAPIEmulator.start()
        let environment = ["AWS_LAMBDA_RUNTIME_API": api.address, "DISCFG_LOG_LEVEL": "critical"]
        let loop = Task { await LambdaExtension.run(name: "discfg-agent", environment: environment) { _ in Hanging() } }
        _ = try await api.waitForFirstNextRequest()
        let start = ContinuousClock.now
        try await api.shutdown(deadline: .milliseconds(800))
        #expect(await loop.value == 0)
        #expect(ContinuousClock.now - start < .seconds(2))
        await api.stop()
    }

    @Test("the emulator refuses event/next and errors without a registered identifier, and records the violation")
    func emulatorRefusesStrangers() async throws {
        let api = try await ExtensionsAPIEmulator.start()
        var next = HTTPClientRequest(url: "http://\(api.address)/2020-01-01/extension/event/next")
        next.headers.add(name: "Lambda-Extension-Identifier", value: "not-registered")
        #expect(try await HTTPClient.shared.execute(next, timeout: .seconds(10)).status.code == 403)
        var register = HTTPClientRequest(url: "http://\(api.address)/2020-01-01/extension/register")
        register.method = .POST
        register.body = .bytes(ByteBuffer(string: #"{"events":["INVOKE"]}"#))
        #expect(try await HTTPClient.shared.execute(register, timeout: .seconds(10)).status.code == 400, "no Lambda-Extension-Name")
        #expect(await api.protocolViolations.count == 2)
        #expect(await api.registrations.isEmpty)
        await api.stop()
    }

    @Test("event bodies parse as Lambda sends them; anything else is refused with what arrived")
    func eventParsing() throws {
        let invoke = try ExtensionsAPIClient.event(Data(#"{"eventType":"INVOKE","deadlineMs":1700000000000,"requestId":"r1","invokedFunctionArn":"arn","tracing":{"type":"X-Amzn-Trace-Id","value":"x"}}"#.utf8))
        #expect(invoke == .invoke(requestID: "r1", deadline: Date(timeIntervalSince1970: 1_700_000_000)))
        let shutdown = try ExtensionsAPIClient.event(Data(#"{"eventType":"SHUTDOWN","shutdownReason":"TIMEOUT","deadlineMs":1700000002000}"#.utf8))
        #expect(shutdown == .shutdown(reason: "TIMEOUT", deadline: Date(timeIntervalSince1970: 1_700_000_002)))
        #expect(throws: RuntimeAPIClient.TransportError.self) { try ExtensionsAPIClient.event(Data(#"{"eventType":"RESTORE"}"#.utf8)) }
        #expect(throws: RuntimeAPIClient.TransportError.self) { try ExtensionsAPIClient.event(Data("not json".utf8)) }
    }
}
