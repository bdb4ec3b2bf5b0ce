import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Reads while a staged deployment runs: a read naming an entity (`Discfg-Entity`,
/// AppConfig's `Entity-Id`, an OFREP `targetingKey`) gets the candidate exactly when the
/// deployment exposes that entity now, on every read route; a plain read gets the stable
/// version until the clock makes the deployment COMPLETE.
@Suite("API: what readers see while a staged deployment runs")
struct DeploymentReadTests {
    static let start = Date(milliseconds: 1_767_225_600_000)
    static let c = try! ConfigName("c")
    static let entities = (0..<300).map { "host-\($0)" }

    /// Config `c` with `/app/a` = 1, `/app/b` = 2, `/web/x` = 1, and a deployment of
    /// `/app/` (a = 10, c = 3, no b) at 50 % for an hour.
    static func deploy(_ server: LiveServer, strategy: DeploymentStrategy? = nil) async throws -> Deployment {
        _ = try await server.store.createConfig(c, settings: ConfigSettings())
        for (key, value) in [("/app/a", "1"), ("/app/b", "2"), ("/web/x", "1")] {
            _ = try await server.store.set(try Key(key), to: Data(value.utf8), in: c, options: SetOptions())
        }
        let plan = DeploymentPlan(
            prefix: try KeyPrefix("/app/"),
            entries: [.init(key: try Key("/app/a"), value: Data("10".utf8)), .init(key: try Key("/app/c"), value: Data("3".utf8))],
            replace: true, strategy: try strategy ?? DeploymentStrategy(growth: .linear, stepBasisPoints: 5_000, intervalSeconds: 3_600, bakeSeconds: 0)
        )
        return try await server.store.changeDeployment(.start(plan), in: c).deployment
    }

    @Test("GET of a key: the candidate exactly for the entities the deployment exposes now, and the version named in Discfg-Deployment")
    func keyReads() async throws {
        let clock = ManualClock(Self.start)
        try await withServer(try await LiveServer.start(clock: clock)) { server in
            let deployment = try await Self.deploy(server)
            var exposed = 0
            for entity in Self.entities {
                let sees = deployment.seesCandidate(entity: entity, at: Self.start.milliseconds)
                let header = entity.hasSuffix("7") ? "Entity-Id" : "Discfg-Entity"
                let reply = try await server.get("/v1/c/keys/app/a?raw", headers: [(header, entity)])
                #expect(reply.status == 200 && reply.text == (sees ? "10" : "1"), "\(entity): \(reply.status) \(reply.text)")
                let version = reply.headers.first(name: "Discfg-Deployment")
                #expect(version == "\(deployment.id); version=\(sees ? deployment.candidateRevision.rawValue : deployment.stableRevision.rawValue); \(sees ? "candidate" : "stable")")
                let removed = try await server.get("/v1/c/keys/app/b?raw", headers: [(header, entity)])
                #expect(removed.status == (sees ? 404 : 200), "\(entity): /app/b \(removed.status)")
                if sees { exposed += 1 }
            }
            #expect((120...180).contains(exposed), "50 % of \(Self.entities.count) entities, give or take: \(exposed)")
            for _ in 0..<3 {
                let plain = try await server.get("/v1/c/keys/app/a?raw")
                #expect(plain.text == "1" && plain.headers.first(name: "Discfg-Deployment")?.hasSuffix("stable") == true, "a plain read is the stable version")
            }
            let outside = try await server.get("/v1/c/keys/web/x?raw", headers: [("Discfg-Entity", "host-1")])
            #expect(outside.text == "1" && outside.headers.first(name: "Discfg-Deployment") == nil, "a key no deployment covers")
            let long = try await server.get("/v1/c/keys/app/a", headers: [("Discfg-Entity", String(repeating: "x", count: 1025))])
            #expect(long.status == 400 && long.text.contains("Discfg-Entity"), "\(long.text)")
        }
    }

    @Test("a listing and a document show an exposed entity the candidate's keys; others the live ones")
    func listingsAndDocuments() async throws {
        let clock = ManualClock(Self.start)
        try await withServer(try await LiveServer.start(clock: clock)) { server in
            let deployment = try await Self.deploy(server)
            let now = Self.start.milliseconds
            let exposed = try #require(Self.entities.first { deployment.seesCandidate(entity: $0, at: now) })
            let hidden = try #require(Self.entities.first { !deployment.seesCandidate(entity: $0, at: now) })
            for (entity, keys, document) in [(exposed, ["/app/a", "/app/c", "/web/x"], #"{"a":"10","c":"3"}"#), (hidden, ["/app/a", "/app/b", "/web/x"], #"{"a":"1","b":"2"}"#)] {
                let listed = try await server.get("/v1/c/keys?recursive", headers: [("Discfg-Entity", entity)])
                #expect(try listed.envelope().items?.map(\.key).filter { !$0.hasPrefix("/.discfg/") } == keys, "\(entity): \(listed.text)")
                let read = try await server.get("/v1/c/keys/app/?document", headers: [("Discfg-Entity", entity)])
                #expect(read.text.filter { !$0.isWhitespace } == document, "\(entity): \(read.text)")
            }
        }
    }

    @Test("once the clock makes it COMPLETE, a plain read is the candidate before any monitor records it; after, the live keys are")
    func plainReadsAtCompletion() async throws {
        let clock = ManualClock(Self.start)
        try await withServer(try await LiveServer.start(clock: clock)) { server in
            let deployment = try await Self.deploy(server, strategy: try DeploymentStrategy(growth: .linear, stepBasisPoints: 5_000, intervalSeconds: 60, bakeSeconds: 60))
            #expect(try await server.get("/v1/c/keys/app/a?raw").text == "1")
            clock.advance(seconds: 180)
            #expect(try await server.get("/v1/c/keys/app/a?raw").text == "10", "COMPLETE by the clock")
            _ = try await server.store.changeDeployment(.transition(id: deployment.id, .complete, reason: "", after: 0), in: Self.c)
            #expect(try await server.store.get(try Key("/app/a"), in: Self.c)?.value == Data("10".utf8))
            let read = try await server.get("/v1/c/keys/app/a?raw")
            #expect(read.text == "10")
        }
    }

    @Test("an OFREP evaluation of a staged flag set splits on the context's targetingKey")
    func flagEvaluations() async throws {
        let clock = ManualClock(Self.start)
        try await withServer(try await LiveServer.start(clock: clock)) { server in
            _ = try await server.store.createConfig(Self.c, settings: ConfigSettings())
            func flagSet(_ variant: String) -> Data {
                Data(#"{"flags": {"new-ui": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "\#(variant)"}}}"#.utf8)
            }
            _ = try await server.store.set(try Key("/flags/web"), to: flagSet("off"), in: Self.c, options: SetOptions(contentType: "application/json"))
            let plan = DeploymentPlan(
                prefix: try KeyPrefix("/flags/"), entries: [.init(key: try Key("/flags/web"), value: flagSet("on"), contentType: "application/json")], replace: false,
                strategy: try DeploymentStrategy(growth: .linear, stepBasisPoints: 2_000, intervalSeconds: 3_600, bakeSeconds: 0)
            )
            let deployment = try await server.store.changeDeployment(.start(plan), in: Self.c).deployment
            var on = 0
            for entity in Self.entities {
                let reply = try await server.request(.POST, "/v1/c/ofrep/v1/evaluate/flags/new-ui", body: Data(#"{"context": {"targetingKey": "\#(entity)"}}"#.utf8))
                let sees = deployment.seesCandidate(entity: entity, at: Self.start.milliseconds)
                #expect(reply.status == 200 && reply.text.contains(#""value":\#(sees)"#), "\(entity): \(reply.text)")
                if sees { on += 1 }
            }
            #expect((30...90).contains(on), "20 % of \(Self.entities.count): \(on)")
        }
    }
}
