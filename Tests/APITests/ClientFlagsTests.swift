import DiscfgClient
import DiscfgCore
import DiscfgFlags
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import InMemoryTracing
import MetricsTestKit
import Testing
import Tracing

/// Feature flags in the Swift client: typed reads evaluated in the process from a live
/// server's flag sets (OFREPFixtures' `web` and `ops`), counted and traced.
@Suite("Client: feature flags evaluated in the process")
struct ClientFlagsTests {
    /// GET requests the server routed (a list of `/flags/` among them), by its own metrics.
    private func gets(_ metrics: TestMetrics) -> Int64 {
        metrics.counters(label: "discfg_http_requests_total")
            .filter { $0.dimensions.contains { $0 == ("method", "GET") } }
            .reduce(0) { $0 + $1.totalValue }
    }

    @Test("typed reads: every type with its variant, reason and metadata; disabled, missing, mistyped and failing flags answer the default with the reason why")
    func typedReads() async throws {
        let metrics = TestMetrics()
        try await withServer(try await LiveServer.start()) { server in
            try await OFREPFixtures.seed(server.store)
            let cfg = try await ConfigClient(url: URL(string: server.baseURL)!).config("demo", flagTelemetry: FlagTelemetry(metrics: metrics))

            let pro = await cfg.bool("bool-flag", default: false, context: ["plan": "pro"])
            #expect((pro.key, pro.value, pro.variant, pro.reason, pro.errorCode) == ("bool-flag", true, "on", .targetingMatch, nil))
            #expect(pro.metadata == ["flagSetId": "web", "version": 2])
            let free = await cfg.bool("bool-flag", default: true, context: ["plan": "free"])
            #expect((free.value, free.variant, free.reason) == (false, "off", .defaultValue))
            let blue = await cfg.string("string-flag", default: "", context: ["email": "jane@example.org"])
            #expect((blue.value, blue.variant, blue.reason) == ("#00f", "blue", .targetingMatch))
            let small = await cfg.int("int-flag", default: 0)
            #expect((small.value, small.variant, small.reason) == (3, "small", .staticValue))
            let ten = await cfg.double("float-flag", default: 0)
            #expect((ten.value, ten.variant, ten.reason) == (10.0, "ten", .staticValue))
            // An integer variant is a number too.
            #expect(await cfg.double("int-flag", default: 0).value == 3)
            let object = await cfg.object("object-flag", default: nil)
            #expect(object.value == (try JSONParser.parse(#"{"size": 1, "ratio": 2.0, "tags": ["x"]}"#)))
            #expect(object.metadata["owner"] == "web")

            // The caller's default, with the reason and no variant.
            let off = await cfg.bool("off-flag", default: false)
            #expect((off.value, off.variant, off.reason, off.errorCode) == (false, nil, .disabled, nil))
            let missing = await cfg.string("no-such-flag", default: "fallback")
            #expect((missing.value, missing.reason, missing.errorCode) == ("fallback", .error, .flagNotFound))
            let mistyped = await cfg.int("string-flag", default: 7)
            #expect((mistyped.value, mistyped.variant, mistyped.reason, mistyped.errorCode) == (7, nil, .error, .typeMismatch))
            // A float variant is not an integer, as flagd types it.
            #expect(await cfg.int("float-flag", default: 1).errorCode == .typeMismatch)
            let broken = await cfg.bool("broken-rule", default: false)
            #expect((broken.value, broken.errorCode) == (false, .parseError))
            #expect(broken.errorMessage?.contains("no_such_operator") == true)
        }

        // Each evaluation counted by flag, variant ("default" for the caller's) and reason.
        #expect(try metrics.expectCounter(FlagTelemetry.name, [("feature_flag.key", "bool-flag"), ("feature_flag.variant", "on"), ("feature_flag.reason", "targeting_match")]).totalValue == 1)
        // Read as an integer and as a number: one series.
        #expect(try metrics.expectCounter(FlagTelemetry.name, [("feature_flag.key", "int-flag"), ("feature_flag.variant", "small"), ("feature_flag.reason", "static")]).totalValue == 2)
        #expect(try metrics.expectCounter(FlagTelemetry.name, [("feature_flag.key", "off-flag"), ("feature_flag.variant", "default"), ("feature_flag.reason", "disabled")]).totalValue == 1)
        #expect(try metrics.expectCounter(FlagTelemetry.name, [("feature_flag.key", "no-such-flag"), ("feature_flag.variant", "default"), ("feature_flag.reason", "error")]).totalValue == 1)
        #expect(metrics.counterTotal(label: FlagTelemetry.name) == 12)
    }

    @Test("without following, the flag sets are read once per max age; a server that cannot be reached answers the default with GENERAL, never a throw")
    func cachedAndUnreachable() async throws {
        let serverMetrics = TestMetrics()
        let server = try await LiveServer.start { $0.metricsBackend = serverMetrics }
        try await OFREPFixtures.seed(server.store)
        let client = try ConfigClient(url: URL(string: server.baseURL)!)
        let cfg = try await client.config("demo", maxAge: .seconds(3600))
        let before = gets(serverMetrics)
        #expect(await cfg.bool("bool-flag", default: false, context: ["plan": "pro"]).value == true)
        // One read of the flag sets and one of the running deployments (a staged deployment
        // of flag sets changes what an entity evaluates).
        #expect(gets(serverMetrics) == before + 2)
        for _ in 0..<5 { #expect(await cfg.int("int-flag", default: 0).value == 3) }
        #expect(gets(serverMetrics) == before + 2)

        let fresh = try await client.config("demo", maxAge: .zero)
        await server.stop()
        let down = await fresh.bool("bool-flag", default: true, context: ["plan": "free"])
        #expect((down.value, down.variant, down.reason, down.errorCode) == (true, nil, .error, .general))
        #expect(down.errorMessage?.contains("could not be read") == true)
        // The handle that read within its max age still answers from memory.
        #expect(await cfg.int("int-flag", default: 0).value == 3)
    }

    @Test("a following client evaluates from its copy with no request per evaluation, and sees a kill switch as soon as the watch brings it")
    func followedKillSwitch() async throws {
        let serverMetrics = TestMetrics()
        try await withServer(try await LiveServer.start { $0.metricsBackend = serverMetrics }) { server in
            try await OFREPFixtures.seed(server.store)
            let cfg = try await ConfigClient(url: URL(string: server.baseURL)!).config("demo", maxAge: .zero)
            try await cfg.followChanges()
            let updates = await cfg.updates()
            var iterator = updates.makeAsyncIterator()
            // A change outside /flags/ arrives: the watch is connected (and counted).
            let port = try Key("/app/port")
            _ = try await server.store.set(port, to: Data("8081".utf8), in: OFREPFixtures.demo, options: SetOptions())
            #expect(await iterator.next()?.key == port)
            let before = gets(serverMetrics)
            for _ in 0..<20 { #expect(await cfg.bool("bool-flag", default: false, context: ["plan": "pro"]).value == true) }

            let disabled = OFREPFixtures.web.replacingOccurrences(of: #""bool-flag": {"state": "ENABLED""#, with: #""bool-flag": {"state": "DISABLED""#)
            #expect(disabled != OFREPFixtures.web)
            try await OFREPFixtures.write(disabled, at: OFREPFixtures.webKey, in: server.store)
            #expect(await iterator.next()?.key == OFREPFixtures.webKey)
            let off = await cfg.bool("bool-flag", default: false, context: ["plan": "pro"])
            #expect((off.value, off.variant, off.reason) == (false, nil, .disabled))
            try await OFREPFixtures.write(OFREPFixtures.web, at: OFREPFixtures.webKey, in: server.store)
            #expect(await iterator.next()?.key == OFREPFixtures.webKey)
            #expect(await cfg.bool("bool-flag", default: false, context: ["plan": "pro"]).value == true)
            #expect(gets(serverMetrics) == before)
            await cfg.stopFollowing()
        }
    }

    @Test("an evaluation inside a span adds a feature_flag.evaluation event with the key, variant and reason")
    func spanEvent() async throws {
        let tracer = InMemoryTracer()
        try await withServer(try await LiveServer.start()) { server in
            try await OFREPFixtures.seed(server.store)
            let cfg = try await ConfigClient(url: URL(string: server.baseURL)!).config("demo", flagTelemetry: FlagTelemetry(metrics: TestMetrics(), tracer: tracer))
            let span = tracer.startSpan("checkout")
            await InstrumentationContext.$current.withValue(span.context) {
                _ = await cfg.string("string-flag", default: "", context: ["email": "jane@example.org"])
                _ = await cfg.bool("no-such-flag", default: false)
            }
            span.end()
            let events = try #require(tracer.finishedSpans.first { $0.operationName == "checkout" }).events
            #expect(events.map(\.name) == [FlagTelemetry.name, FlagTelemetry.name])
            #expect(events.first?.attributes["feature_flag.key"]?.toSpanAttribute() == .string("string-flag"))
            #expect(events.first?.attributes["feature_flag.result.variant"]?.toSpanAttribute() == .string("blue"))
            #expect(events.first?.attributes["feature_flag.result.reason"]?.toSpanAttribute() == .string("targeting_match"))
            #expect(events.last?.attributes["feature_flag.result.variant"] == nil)
            #expect(events.last?.attributes["error.type"]?.toSpanAttribute() == .string("flag_not_found"))
        }
    }

    @Test("a staged deployment of a flag set: the client evaluates each targetingKey as the server's OFREP does, the candidate exactly for the entities the rule exposes, following or not")
    func stagedFlagSet() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await OFREPFixtures.seed(server.store)
            let candidate = OFREPFixtures.web.replacingOccurrences(of: #""defaultVariant": "small"}"#, with: #""defaultVariant": "big"}"#)
            #expect(candidate != OFREPFixtures.web)
            let strategy = try DeploymentStrategy(growth: .linear, stepBasisPoints: 5000, intervalSeconds: 3600, bakeSeconds: 0)
            let plan = DeploymentPlan(
                id: "00000000000000f1", prefix: try KeyPrefix("/flags/"), entries: [.init(key: OFREPFixtures.webKey, value: Data(candidate.utf8))], replace: false,
                strategy: strategy, message: "big by default"
            )
            let deployment = try await server.store.changeDeployment(.start(plan), in: OFREPFixtures.demo).deployment
            let client = try ConfigClient(url: URL(string: server.baseURL)!)
            let polled = try await client.config("demo", maxAge: .seconds(3600))
            let followed = try await client.config("demo", maxAge: .zero)
            try await followed.followChanges()
            var seen: Set<String> = []
            for user in 0..<40 {
                let key = "user-\(user)"
                let exposed = DeploymentOverlay.sees(deployment, entity: key, at: Date().milliseconds)
                let expected = exposed ? "big" : "small"
                let body = Data(#"{"context": {"targetingKey": "\#(key)"}}"#.utf8)
                let served = try await server.request(.POST, "/v1/demo/ofrep/v1/evaluate/flags/int-flag", body: body, headers: [("Content-Type", "application/json")])
                let variant = try OFREPFixtures.object(Data(served.text.utf8))["variant"]
                #expect(variant == .string(expected), "serve, \(key): \(served.text)")
                for cfg in [polled, followed] {
                    let local = await cfg.int("int-flag", default: 0, context: ["targetingKey": .string(key)])
                    #expect(local.variant == expected, "the client, \(key): \(local)")
                }
                seen.insert(expected)
            }
            #expect(seen == ["big", "small"], "a 50 % share exposes some of 40 entities and not others")
            #expect(await polled.int("int-flag", default: 0).variant == "small", "without an entity, the stable flag set until the deployment completes")
            await followed.stopFollowing()
        }
    }
}
