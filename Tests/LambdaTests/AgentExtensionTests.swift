import DiscfgTestSupport
import Foundation
import Testing

/// `discfg agent --lambda-extension` as a layer runs it: the real binary started as
/// `discfg-agent`, configured by environment, against the Extensions API emulator, on
/// SQLite and on DynamoDB (moto).
@Suite("Lambda: the agent as an extension")
struct AgentExtensionTests {
    /// A store the extension reads: a SQLite file, or a table on moto.
    enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqlite
        case dynamodb

        var testDescription: String { rawValue }
    }

    /// A store with config `app` holding `/db/host` = `db1`, and the CLI against it.
    struct Seeded: Sendable {
        let cli: DiscfgCommand
        let cleanUp: @Sendable () -> Void

        static func make(_ kind: StoreKind) async throws -> Seeded {
            let seeded: Seeded
            switch kind {
            case .sqlite:
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-ext-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let cli = DiscfgCommand(store: "sqlite://\(directory.appendingPathComponent("store.db").path)", environment: MotoTable.awsEnvironment(home: directory))
                seeded = Seeded(cli: cli) { try? FileManager.default.removeItem(at: directory) }
            case .dynamodb:
                let table = try await MotoTable.create()
                seeded = Seeded(cli: table.cli) { table.cleanUp() }
            }
            let created = try await seeded.cli.run("create", "app")
            guard created.status == 0 else { throw LambdaTestFailure("discfg create exited \(created.status): \(created.stderr)") }
            try await seeded.set("/db/host", "db1")
            return seeded
        }

        func set(_ key: String, _ value: String) async throws {
            let result = try await cli.run("set", key, value, "--config", "app")
            guard result.status == 0 else { throw LambdaTestFailure("discfg set exited \(result.status): \(result.stderr)") }
        }
    }

    static func environment(store: String, interval: Int = 1) -> [String: String] {
        ["DISCFG_STORE": store, "DISCFG_AGENT_CONFIGS": "app", "DISCFG_AGENT_INTERVAL": String(interval)]
    }

    /// Waits until `read` gives `expected`, running `between` after each other answer.
    static func waitForRead(
        _ expected: String, timeout: Duration = .seconds(15), between: (@Sendable () async throws -> Void)? = nil,
        _ read: @Sendable () async throws -> String?
    ) async throws {
        try await eventually("\(expected) is read", timeout: timeout, interval: .milliseconds(100)) {
            if (try? await read()) == expected { return true }
            try await between?()
            return false
        }
    }

    @Test("registers, loads before its first event/next, answers reads during invokes, refreshes between them, and exits 0 on SHUTDOWN", arguments: StoreKind.allCases)
    func lifecycle(_ kind: StoreKind) async throws {
        let seeded = try await Seeded.make(kind)
        defer { seeded.cleanUp() }
        try await withExtension(environment: Self.environment(store: seeded.cli.store)) { running in
            let firstNext = try await running.api.waitForFirstNextRequest(timeout: .seconds(30))
            // Nothing waits between the first event/next and this read: the load came before it.
            #expect(try await running.read("app", "/db/host") == "db1")
            let registrations = await running.api.registrations
            #expect(registrations.map(\.name) == ["discfg-agent"])
            #expect(registrations.first?.events == ["INVOKE", "SHUTDOWN"])
            #expect(await running.api.calls.map(\.route) == [.register, .next])
            #expect(try #require(registrations.first).at < firstNext)

            let delivery = try await running.api.invoke()
            #expect(try #require(delivery.heldFor) < .milliseconds(500))
            #expect(try await running.read("app", "/db/host") == "db1")
            // Every answer, a read's and a refusal's alike, says how stale the copy may be.
            for path in ["/v1/app/keys/db/host", "/v1/app/keys/missing", "/v1/other/keys/k"] {
                let (status, headers, _) = try await running.getWithHeaders(path)
                let staleness = try #require(headers["discfg-staleness"], "\(path) answered \(status) without Discfg-Staleness")
                #expect(Double(staleness).map { $0 >= 0 && $0 < 60 } == true, "\(path): Discfg-Staleness \(staleness)")
            }

            try await seeded.set("/db/host", "db2")
            try await Self.waitForRead("db2", between: { try await running.api.invoke() }) {
                try await running.read("app", "/db/host")
            }

            try await running.api.shutdown(deadline: .seconds(2))
            #expect(await running.exitStatus(within: .seconds(3)) == 0, "\(running.process.output.logs)")
            #expect(await running.api.protocolViolations.isEmpty)
            #expect(await running.api.reportedErrors.isEmpty)
        }
    }

    @Test("a store that stops answering never holds an invoke up: event/next follows each INVOKE at once, reads answer the last copy")
    func slowStoreDoesNotHoldInvokes() async throws {
        try await withMotoTable(ownServer: true) { table in
            try await table.createConfig("app")
            _ = try await table.cli.json("set", "/db/host", "db1", "--config", "app")
            let proxy = try await FaultProxy.start(upstream: table.moto.endpoint, seed: 1, rates: [:])
            let store = "dynamodb://us-east-1/\(table.name)?endpoint=\(proxy.endpoint.absoluteString)"
            try await withServer(proxy) { proxy in
                try await withExtension(environment: Self.environment(store: store)) { running in
                    _ = try await running.api.waitForFirstNextRequest(timeout: .seconds(30))
                    #expect(try await running.read("app", "/db/host") == "db1")
                    try await proxy.set(.blackHole)
                    _ = try await table.cli.json("set", "/db/host", "db2", "--config", "app")
                    for _ in 0..<4 {
                        // Past the 1 s interval: each invoke finds a refresh due.
                        try await Task.sleep(for: .milliseconds(1_200))
                        let delivery = try await running.api.invoke()
                        let held = try #require(delivery.heldFor)
                        #expect(held < .milliseconds(300), "event/next came \(held) after the INVOKE")
                        let start = ContinuousClock.now
                        #expect(try await running.read("app", "/db/host") == "db1")
                        #expect(ContinuousClock.now - start < .seconds(1))
                    }
                    try await proxy.set(.pass)
                    try await Self.waitForRead("db2", between: { try await running.api.invoke() }) {
                        try await running.read("app", "/db/host")
                    }
                    try await running.api.shutdown(deadline: .seconds(2))
                    #expect(await running.exitStatus(within: .seconds(3)) == 0, "\(running.process.output.logs)")
                }
            }
        }
    }

    @Test("an unreachable store and no cache: init/error naming the cause, a non-zero exit, no event/next")
    func initErrorWithoutStore() async throws {
        let port = try MotoServer.freeLoopbackPort()
        let store = "dynamodb://us-east-1/nowhere?endpoint=http://127.0.0.1:\(port)"
        try await withExtension(environment: Self.environment(store: store)) { running in
            let error = try await running.api.waitForError(.initError, timeout: .seconds(60))
            #expect(error.type == "Extension.discfg.InitError")
            #expect(error.errorTypeHeader == error.type)
            #expect(!error.message.isEmpty)
            let status = await running.exitStatus(within: .seconds(10))
            #expect(status != nil && status != 0, "\(running.process.output.logs)")
            #expect(!(await running.api.calls.contains { $0.route == .next }))
        }
    }

    @Test("with the store unreachable at init, the copy an earlier environment cached is served, and no init/error is sent")
    func cacheAtInit() async throws {
        let seeded = try await Seeded.make(.sqlite)
        defer { seeded.cleanUp() }
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-ext-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        var environment = Self.environment(store: seeded.cli.store)
        environment["DISCFG_AGENT_CACHE_DIR"] = cache
        try await withExtension(environment: environment) { running in
            _ = try await running.api.waitForFirstNextRequest(timeout: .seconds(30))
            try await running.api.shutdown()
            #expect(await running.exitStatus(within: .seconds(3)) == 0)
        }
        let port = try MotoServer.freeLoopbackPort()
        environment["DISCFG_STORE"] = "dynamodb://us-east-1/gone?endpoint=http://127.0.0.1:\(port)"
        try await withExtension(environment: environment) { running in
            _ = try await running.api.waitForFirstNextRequest(timeout: .seconds(60))
            #expect(try await running.read("app", "/db/host") == "db1")
            #expect(await running.api.reportedErrors.isEmpty)
            try await running.api.invoke()
            try await running.api.shutdown()
            #expect(await running.exitStatus(within: .seconds(3)) == 0)
        }
    }

    @Test("discfg agent --lambda-extension runs the same extension; with --config it is refused as bad usage")
    func flag() async throws {
        let seeded = try await Seeded.make(.sqlite)
        defer { seeded.cleanUp() }
        try await withExtension(environment: Self.environment(store: seeded.cli.store), arguments: ["agent", "--lambda-extension"]) { running in
            _ = try await running.api.waitForFirstNextRequest(timeout: .seconds(30))
            #expect(await running.api.registrations.map(\.name) == ["discfg-agent"])
            #expect(try await running.read("app", "/db/host") == "db1")
            try await running.api.shutdown()
            #expect(await running.exitStatus(within: .seconds(3)) == 0)
        }
        try await withExtension(environment: Self.environment(store: seeded.cli.store), arguments: ["agent", "--lambda-extension", "--config", "app"]) { running in
            #expect(await running.exitStatus(within: .seconds(10)) == 2)
            #expect(running.process.output.stderr.contains("--lambda-extension"))
            #expect(await running.api.registrations.isEmpty)
        }
    }

    @Test("DISCFG_AGENT_INTERVAL takes --interval's durations: 1500ms refreshes between invokes")
    func intervalWithUnit() async throws {
        let seeded = try await Seeded.make(.sqlite)
        defer { seeded.cleanUp() }
        var environment = Self.environment(store: seeded.cli.store)
        environment["DISCFG_AGENT_INTERVAL"] = "1500ms"
        try await withExtension(environment: environment) { running in
            _ = try await running.api.waitForFirstNextRequest(timeout: .seconds(30))
            try await seeded.set("/db/host", "db2")
            try await Self.waitForRead("db2", between: { try await running.api.invoke() }) { try await running.read("app", "/db/host") }
            try await running.api.shutdown()
            #expect(await running.exitStatus(within: .seconds(3)) == 0)
        }
    }

    @Test("a DISCFG_AGENT_PORT another process serves on: init/error naming the port and the variable, a non-zero exit, no crash")
    func portInUse() async throws {
        let seeded = try await Seeded.make(.sqlite)
        defer { seeded.cleanUp() }
        try await withExtension(environment: Self.environment(store: seeded.cli.store)) { first in
            _ = try await first.api.waitForFirstNextRequest(timeout: .seconds(30))
            var environment = Self.environment(store: seeded.cli.store)
            environment["DISCFG_AGENT_PORT"] = String(first.port)
            try await withExtension(environment: environment) { second in
                let error = try await second.api.waitForError(.initError, timeout: .seconds(30))
                #expect(error.message.contains("cannot serve on 127.0.0.1:\(first.port): the port is in use"), "\(error.message)")
                #expect(error.message.contains("DISCFG_AGENT_PORT"), "\(error.message)")
                #expect(await second.exitStatus(within: .seconds(10)) == 1, "\(second.process.output.logs)")
            }
            #expect(try await first.read("app", "/db/host") == "db1")
            try await first.api.shutdown()
            #expect(await first.exitStatus(within: .seconds(3)) == 0)
        }
    }

    @Test("settings that are missing or wrong are an init/error naming the variable", arguments: [
        (["DISCFG_STORE": "sqlite:///tmp/x.db"], "DISCFG_AGENT_CONFIGS"),
        (["DISCFG_STORE": "sqlite:///tmp/x.db", "DISCFG_AGENT_CONFIGS": "ok,bad name"], "DISCFG_AGENT_CONFIGS"),
        (["DISCFG_STORE": "sqlite:///tmp/x.db", "DISCFG_AGENT_CONFIGS": "app", "DISCFG_AGENT_INTERVAL": "0"], "DISCFG_AGENT_INTERVAL"),
        (["DISCFG_STORE": "sqlite:///tmp/x.db", "DISCFG_AGENT_CONFIGS": "app", "DISCFG_AGENT_PORT": "99999"], "DISCFG_AGENT_PORT"),
    ] + ["0", "-1", "999ms", "25h", "9223372036854775808", "18446744073709551616", "soon"].map {
        (["DISCFG_STORE": "sqlite:///tmp/x.db", "DISCFG_AGENT_CONFIGS": "app", "DISCFG_AGENT_INTERVAL": $0], "DISCFG_AGENT_INTERVAL must be a duration from 1s to 24h")
    } + ["0", "-1", "65536", "9223372036854775808", "18446744073709551616", "http"].map {
        (["DISCFG_STORE": "sqlite:///tmp/x.db", "DISCFG_AGENT_CONFIGS": "app", "DISCFG_AGENT_PORT": $0], "DISCFG_AGENT_PORT must be a whole number from 1 to 65535")
    })
    func badSettings(_ environment: [String: String], _ named: String) async throws {
        try await withExtension(environment: environment) { running in
            let error = try await running.api.waitForError(.initError, timeout: .seconds(30))
            #expect(error.message.contains(named), "\(error.message)")
            let status = await running.exitStatus(within: .seconds(10))
            #expect(status != nil && status != 0)
        }
    }
}
