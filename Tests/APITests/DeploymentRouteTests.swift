import DiscfgAPI
import DiscfgClient
import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation
import NIOHTTP1
import Testing

/// Staged deployments over a live server: started with a candidate as an import takes it,
/// listed, read, paused, resumed, completed and rolled back through their routes, each
/// answer the record at the server's clock; bad parameters, stale transitions and callers
/// without the write role over the whole config are refused with nothing written.
@Suite("API: staged deployments — their routes, documents and refusals")
struct DeploymentRouteTests {
    static let start = Date(milliseconds: 1_767_225_600_000)
    static let c = try! ConfigName("c")
    static let linear = "prefix=/app/&growth=linear&step=50&interval=1m&bake=1m"

    /// Config `c` with `/app/a` = 1, `/app/b` = 2 and `/web/x` = 1, written straight into the store.
    static func fill(_ server: LiveServer) async throws {
        _ = try await server.store.createConfig(c, settings: ConfigSettings())
        for (key, value) in [("/app/a", "1"), ("/app/b", "2"), ("/web/x", "1")] {
            _ = try await server.store.set(try Key(key), to: Data(value.utf8), in: c, options: SetOptions())
        }
    }

    static func message(_ text: String) -> [(String, String)] { [(ChangeMessageHeader.name, text)] }

    static func post(_ server: LiveServer, _ path: String, _ body: String? = nil, headers: [(String, String)] = []) async throws -> LiveServer.Reply {
        try await server.request(.POST, path, body: body.map { Data($0.utf8) }, headers: headers)
    }

    @Test("start, list, read, pause, a stale resume (412), resume, complete: documents at the server's clock, the candidate live only when complete")
    func lifecycle() async throws {
        let clock = ManualClock(Self.start)
        try await withServer(try await LiveServer.start(clock: clock)) { server in
            try await Self.fill(server)
            let started = try await Self.post(
                server, "/v1/c/deployments?\(Self.linear)&signal=health&signal=alarm:checkout-5xx&id=00000000000000a1", #"{"/app/a": "10", "/app/c": "3"}"#,
                headers: Self.message("raise a")
            )
            #expect(started.status == 201, "\(started.text)")
            let envelope = try started.envelope()
            let document = try #require(envelope.deployment)
            #expect(envelope.action == "deploy-start" && envelope.config == "c" && envelope.revision == Revision(4))
            #expect(document.deployment.id == "00000000000000a1" && document.deployment.prefix.path == "/app/" && document.deployment.message == "raise a")
            #expect(document.deployment.stableRevision == Revision(3) && document.deployment.candidateRevision == Revision(4))
            #expect(document.deployment.signals == [.health, .alarm("checkout-5xx")] && document.deployment.startedBy == "anonymous:anonymous")
            #expect(document.running && document.now == Self.start.milliseconds)
            #expect(document.status == DeploymentStatusDocument(DeploymentStatus(state: .deploying, shareBasisPoints: 5000, step: 1, stepCount: 2, nextStepAt: Self.start.milliseconds + 60_000)))
            #expect(envelope.events?.map(\.key).sorted() == ["/.discfg/deploying/00000000000000a1", "/.discfg/staged/00000000000000a1/app/a", "/.discfg/staged/00000000000000a1/app/c"])
            #expect(envelope.message == "raise a")
            // The record's fields and the document's own, in one object.
            #expect(started.text.contains(#""running":true"#) && started.text.contains(#""status":{"nextStepAt":1767225660000,"shareBasisPoints":5000,"state":"DEPLOYING","step":1,"stepCount":2}"#), "\(started.text)")
            #expect(try await server.store.get(try Key("/app/a"), in: Self.c)?.value == Data("1".utf8), "the live key is the stable version")
            #expect(try await server.get("/v1/c/keys/app/a").envelope().item?.value == "1", "a plain read over REST is the stable version")

            let listed = try await server.get("/v1/c/deployments")
            #expect(listed.status == 200, "\(listed.text)")
            #expect(try listed.envelope().action == "deployments" && listed.envelope().deployments?.map(\.deployment.id) == ["00000000000000a1"])
            let read = try await server.get("/v1/c/deployments/00000000000000a1")
            #expect(try read.status == 200 && read.envelope().deployment == document, "\(read.text)")

            clock.advance(seconds: 30)
            let paused = try await Self.post(server, "/v1/c/deployments/00000000000000a1/pause?after=0", headers: Self.message("watching"))
            #expect(paused.status == 200, "\(paused.text)")
            let pausedDocument = try #require(try paused.envelope().deployment)
            #expect(pausedDocument.status.state == .paused && pausedDocument.status.pausedIn == .deploying && pausedDocument.running)
            #expect(try pausedDocument.deployment.transitions.map(\.reason) == ["watching"] && paused.envelope().revision == Revision(5))

            let revision = try await server.store.configInfo(Self.c).revision
            let stale = try await Self.post(server, "/v1/c/deployments/00000000000000a1/resume?after=0")
            #expect(stale.status == 412 && stale.text.contains("changed since it was read"), "\(stale.text)")
            #expect(try await server.store.configInfo(Self.c).revision == revision, "a stale transition writes nothing")
            let early = try await Self.post(server, "/v1/c/deployments/00000000000000a1/complete")
            #expect(early.status == 400 && early.text.contains("PAUSED"), "\(early.text)")

            let resumed = try await Self.post(server, "/v1/c/deployments/00000000000000a1/resume?after=1")
            #expect(try resumed.status == 200 && resumed.envelope().deployment?.status.state == .deploying, "\(resumed.text)")
            clock.advance(seconds: 150)
            let completed = try await Self.post(server, "/v1/c/deployments/00000000000000a1/complete?after=2", headers: Self.message("schedule ended"))
            #expect(completed.status == 200, "\(completed.text)")
            let done = try #require(try completed.envelope().deployment)
            #expect(done.status.state == .complete && !done.running && done.deployment.transitions.last?.reason == "schedule ended")
            #expect(try await server.store.get(try Key("/app/a"), in: Self.c)?.value == Data("10".utf8), "the candidate is live")
            #expect(try await server.get("/v1/c/keys/app/a").envelope().item?.value == "10", "the server's reads (its views) see the completion")
            let ended = try #require(try await server.get("/v1/c/deployments").envelope().deployments)
            #expect(ended.map(\.running) == [false] && ended.first?.status.state == .complete)
        }
    }

    @Test("a rollback: ROLLED_BACK by the clock while still running, then recorded; the live keys never change")
    func rollback() async throws {
        let clock = ManualClock(Self.start)
        try await withServer(try await LiveServer.start(clock: clock)) { server in
            try await Self.fill(server)
            let started = try await Self.post(server, "/v1/c/deployments?prefix=/web/&strategy=Linear20PercentEvery6Minutes&rollback=0", #"{"/web/x": "2"}"#)
            #expect(started.status == 201, "\(started.text)")
            let id = try #require(try started.envelope().deployment?.deployment.id)
            #expect(try started.envelope().deployment?.deployment.strategy.name == "Linear20PercentEvery6Minutes")
            clock.advance(seconds: 400)
            let rolling = try await Self.post(server, "/v1/c/deployments/\(id)/rollback?after=0", headers: Self.message("alarm"))
            let document = try #require(try rolling.envelope().deployment, "\(rolling.text)")
            #expect(document.running && document.status.state == .rolledBack && document.status.shareBasisPoints == 0)
            let recorded = try await Self.post(server, "/v1/c/deployments/\(id)/rolled-back?after=1")
            #expect(try recorded.status == 200 && recorded.envelope().deployment?.running == false, "\(recorded.text)")
            #expect(try await server.store.get(try Key("/web/x"), in: Self.c)?.value == Data("1".utf8))
        }
    }

    /// A bad start's query, the parameter it names, and a word its sentence holds.
    static let badStarts: [(query: String, field: String, words: String)] = [
        ("growth=linear&step=0&interval=1m", "step", "percentage"),
        ("growth=linear&step=-1&interval=1m", "step", "percentage"),
        ("growth=linear&step=9223372036854775808&interval=1m", "step", "percentage"),
        ("growth=linear&step=18446744073709551616&interval=1m", "step", "percentage"),
        ("growth=linear&step=12.345&interval=1m", "step", "two decimals"),
        ("growth=linear&interval=1m", "step", "needs step"),
        ("growth=linear&step=20", "interval", "interval of 0"),
        ("growth=sideways&step=20&interval=1m", "growth", "linear or exponential"),
        ("strategy=Linear99PercentNever", "strategy", "not a strategy"),
        ("strategy=AllAtOnce&step=20", "step", "predefined strategy"),
        ("replace", "strategy", "strategy=NAME"),
        ("growth=linear&step=20&interval=forever", "interval", "unknown unit"),
        ("growth=linear&step=20&interval=-1m", "interval", "negative"),
        ("growth=linear&step=20&interval=18446744073709551616", "interval", "longer than"),
        ("growth=linear&step=20&interval=1m&bake=8d", "bake", "longer than"),
        ("strategy=AllAtOnce&rollback=1x", "rollback", "unknown unit"),
        ("strategy=AllAtOnce&signal=bogus", "signal", "not a signal"),
        ("strategy=AllAtOnce&signal=alarm:", "signal", "alarm name"),
        ("strategy=AllAtOnce&signal=health&signal=health", "signals", "named twice"),
        ("strategy=AllAtOnce&id=XYZ", "id", "16 lowercase hexadecimal"),
        ("strategy=AllAtOnce&id=0123456789abcdef0", "id", "16 lowercase hexadecimal"),
        ("strategy=AllAtOnce&replace=maybe", "replace", "flag"),
        ("strategy=AllAtOnce&prefix=/.discfg/", "prefix", "discfg's own"),
        ("strategy=AllAtOnce&prefix=/web/", "key", "outside"),
    ]

    @Test("every bad parameter is 400 in one sentence naming it, in the API's words, and nothing is written")
    func badQueries() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            let revision = try await server.store.configInfo(Self.c).revision
            for (query, field, words) in Self.badStarts {
                let reply = try await Self.post(server, "/v1/c/deployments?\(query)", #"{"/app/a": "10"}"#)
                let error = try reply.envelope().error
                #expect(reply.status == 400 && error?.field == field && error?.message.contains(words) == true, "\(query): \(reply.status) \(reply.text)")
                #expect(error?.message.contains("--") == false, "\(query): the CLI's flags are not this API's words: \(reply.text)")
                #expect(try reply.envelope().action == "deploy-start")
            }
            #expect(try await server.store.configInfo(Self.c).revision == revision, "no bad start wrote anything")
            _ = try await Self.post(server, "/v1/c/deployments?prefix=/app/&strategy=AllAtOnce&id=00000000000000a1", #"{"/app/a": "10"}"#)
            let started = try await server.store.configInfo(Self.c).revision
            let badChanges: [(path: String, field: String)] = [
                ("/v1/c/deployments/00000000000000a1/explode", "action"),
                ("/v1/c/deployments/00000000000000a1/pause?after=-1", "after"),
                ("/v1/c/deployments/00000000000000a1/pause?after=x", "after"),
                ("/v1/c/deployments/00000000000000a1/pause?after=18446744073709551616", "after"),
                ("/v1/c/deployments/XYZ/pause", "id"),
                ("/v1/c/deployments/00000000000000A1/pause", "id"),
            ]
            for (path, field) in badChanges {
                let reply = try await Self.post(server, path)
                #expect(try reply.status == 400 && reply.envelope().error?.field == field, "\(path): \(reply.status) \(reply.text)")
            }
            let badRead = try await server.get("/v1/c/deployments/not-an-id")
            #expect(try badRead.status == 400 && badRead.envelope().error?.field == "id", "\(badRead.text)")
            let unknown = try await Self.post(server, "/v1/c/deployments/00000000000000ff/pause")
            #expect(unknown.status == 404, "\(unknown.text)")
            #expect(try await server.get("/v1/c/deployments/00000000000000ff").status == 404)
            #expect(try await server.store.configInfo(Self.c).revision == started, "no bad change wrote anything")
        }
    }

    @Test("access: a reader may list but not start (403), a writer scoped to a prefix may do neither (403), a missing config is 404")
    func access() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            try await Self.fill(server)
            var tokens: [String: String] = [:]
            let grants: [(String, Role, [AccessScope]?)] = [
                ("reader", .read, nil), ("writer", .write, nil), ("prefix-writer", .write, [try AccessScope("c:/app/")]),
            ]
            for (name, role, scopes) in grants {
                let (token, record) = try TokenFormat.generate(role: role, scopes: scopes, description: name, now: Date())
                try await server.store.saveToken(record)
                tokens[name] = token
            }
            let bearer = { (name: String) in [("Authorization", "Bearer \(tokens[name]!)")] }
            let body = #"{"/app/a": "10"}"#
            let revision = try await server.store.configInfo(Self.c).revision
            let startPath = "/v1/c/deployments?\(Self.linear)&id=00000000000000a1"
            #expect(try await Self.post(server, startPath, body, headers: bearer("reader")).status == 403)
            let scoped = try await Self.post(server, startPath, body, headers: bearer("prefix-writer"))
            #expect(scoped.status == 403, "a prefix-scoped writer cannot write discfg's own records: \(scoped.text)")
            #expect(try await server.get("/v1/c/deployments", headers: bearer("prefix-writer")).status == 403)
            #expect(try await server.store.configInfo(Self.c).revision == revision, "a refused start writes nothing")
            #expect(try await server.get("/v1/c/deployments", headers: bearer("reader")).status == 200)

            #expect(try await Self.post(server, startPath, body, headers: bearer("writer")).status == 201)
            #expect(try await Self.post(server, "/v1/c/deployments/00000000000000a1/pause", headers: bearer("reader")).status == 403)
            #expect(try await Self.post(server, "/v1/c/deployments/00000000000000a1/pause", headers: bearer("prefix-writer")).status == 403)
            #expect(try await Self.post(server, "/v1/c/deployments/00000000000000a1/pause", headers: bearer("writer")).status == 200)

            let missing = try await Self.post(server, "/v1/nope/deployments?\(Self.linear)", body, headers: bearer("writer"))
            #expect(missing.status == 404, "\(missing.text)")
            #expect(try await server.get("/v1/nope/deployments", headers: bearer("reader")).status == 404)
            #expect(try await server.get("/v1/nope/deployments/00000000000000a1", headers: bearer("reader")).status == 404)
        }
    }

    @Test("the remote store's start and transitions carry the plan whole: a custom strategy's step, durations and rollback, every kind of signal, the id, the message and the reason")
    func remoteStoreCarriesThePlan() async throws {
        let clock = ManualClock(Self.start)
        try await withServer(try await LiveServer.start(clock: clock)) { server in
            try await Self.fill(server)
            let store = try RemoteStore(url: URL(string: server.baseURL)!, token: nil)
            let strategy = try DeploymentStrategy(growth: .exponential, stepBasisPoints: 1205, intervalSeconds: 5400, bakeSeconds: 86_400, rollbackSeconds: 90)
            let signals: [DeploymentSignal] = [.alarm("checkout 5xx/p99 é&x=1"), .http("https://h.example/health?a=b&c=%20d"), .health]
            let plan = DeploymentPlan(
                id: "00000000000000c1", prefix: try KeyPrefix("/app/"),
                entries: [.init(key: try Key("/app/a"), value: Data("10".utf8), contentType: "text/plain")], replace: true,
                strategy: strategy, signals: signals, message: "raise a: 100% & more"
            )
            let started = try await store.changeDeployment(.start(plan), in: Self.c)
            #expect(started.deployment.strategy == strategy && started.deployment.signals == signals && started.deployment.id == "00000000000000c1")
            #expect(started.deployment.prefix.path == "/app/" && started.deployment.message == "raise a: 100% & more" && started.deployment.startedAt == Self.start.milliseconds)
            #expect(started.revision == Revision(4) && started.events.map(\.key.path).sorted() == [
                "/.discfg/deploying/00000000000000c1", "/.discfg/staged/00000000000000c1/app/a", "/.discfg/staged/00000000000000c1/app/b",
            ])
            let stored = try await server.store.deployment("00000000000000c1", in: Self.c)
            #expect(stored.deployment == started.deployment && stored.running)
            let named = DeploymentPlan(id: "00000000000000c2", prefix: try KeyPrefix("/web/"), entries: [.init(key: try Key("/web/x"), value: Data("2".utf8))], replace: false,
                                       strategy: try DeploymentStrategy.predefined(named: "Canary10Percent20Minutes").withRollbackSeconds(60))
            #expect(try await store.changeDeployment(.start(named), in: Self.c).deployment.strategy == named.strategy)
            clock.advance(seconds: 10)
            let paused = try await store.changeDeployment(.transition(id: "00000000000000c1", .paused, reason: "watching: 50% ✓", after: 0), in: Self.c)
            #expect(paused.deployment.transitions.map(\.reason) == ["watching: 50% ✓"] && paused.deployment.transitions.first?.at == Self.start.milliseconds + 10_000)
            await #expect(throws: DiscfgError.self) { try await store.changeDeployment(.transition(id: "00000000000000c1", .resumed, reason: "", after: 0), in: Self.c) }
            await #expect(throws: DiscfgError.self) { try await store.changeDeployment(.transition(id: "NOT-AN-ID", .resumed, reason: "", after: nil), in: Self.c) }
            #expect(try await server.store.deployment("00000000000000c1", in: Self.c).deployment == paused.deployment)
        }
    }
}
