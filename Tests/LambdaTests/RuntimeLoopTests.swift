import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The Runtime API loop itself: invocation errors, init errors, the `bootstrap` name.
@Suite("Lambda: runtime loop")
struct RuntimeLoopTests {
    typealias Request = GatewayEvent.Request

    @Test("an unknown event is an invocation error discfg.UnknownEvent, and the next invocation is served")
    func unknownEvent() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            try await withLambda(table) { lambda in
                let s3Event = Data(#"{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"k"}}}]}"#.utf8)
                let failed = try await lambda.invoke(s3Event)
                guard case .error(let type, let message) = failed.result else {
                    Issue.record("expected an invocation error, got \(failed.result)")
                    return
                }
                #expect(type == "discfg.UnknownEvent")
                #expect(!message.isEmpty)
                #expect(failed.errorTypeHeader?.isEmpty == false, "Lambda-Runtime-Function-Error-Type is sent")

                let odd = try await lambda.invoke(Data(#"{"hello":"world"}"#.utf8))
                guard case .error(let oddType, _) = odd.result else {
                    Issue.record("expected an invocation error, got \(odd.result)")
                    return
                }
                #expect(oddType == "discfg.UnknownEvent")

                let notJSON = try await lambda.invoke(Data("not json".utf8))
                guard case .error = notJSON.result else {
                    Issue.record("expected an invocation error, got \(notJSON.result)")
                    return
                }

                let (served, _) = try await lambda.request(GatewayEvent.httpAPI(Request("PUT", "/v1/app/keys/after", text: "ok")))
                #expect(served.statusCode == 201, "the process keeps serving: \(served.raw)")
                #expect(lambda.process.isRunning)
            }
        }
    }

    @Test("a bad DISCFG_STORE posts an init error and the process exits non-zero")
    func badStore() async throws {
        try await withMotoTable { table in
            let runtime = try await RuntimeAPIEmulator.start()
            var environment = RunningLambda.environment(table: table, runtime: runtime, extra: [:])
            environment["DISCFG_STORE"] = "bogus://nowhere/at-all"
            let process = try ChildProcess.launch(DiscfgCommand.executable.path, ["lambda"], environment: environment)
            do {
                let initError = try await runtime.waitForInitError(timeout: .seconds(20))
                #expect(!initError.type.isEmpty)
                #expect(initError.message.contains("bogus") || initError.message.lowercased().contains("store"), "\(initError.message)")
                let ended = await process.termination(within: .seconds(60))
                #expect(ended != nil, "the process exits after the init error\n\(process.output.logs)")
                #expect(ended != .exited(0), "\(process.output.logs)")
                #expect(await runtime.nextRequestCount == 0, "no invocation is asked for after a failed init")
            } catch {
                await process.stop()
                await runtime.stop()
                throw error
            }
            await process.stop()
            await runtime.stop()
        }
    }

    @Test("the binary started as bootstrap behaves as discfg lambda")
    func bootstrapName() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let link = table.directory.appendingPathComponent("bootstrap")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: DiscfgCommand.executable)
            let lambda = try await RunningLambda.start(table: table, executable: link, arguments: [])
            do {
                let (response, _) = try await lambda.request(GatewayEvent.httpAPI(Request("PUT", "/v1/app/keys/k", text: "v")))
                #expect(response.statusCode == 201, "\(response.raw)")
            } catch {
                await lambda.stop()
                throw error
            }
            await lambda.stop()
        }
    }
}
