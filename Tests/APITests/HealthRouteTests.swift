import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation
import NIOHTTP1
import Testing

/// Health reports over a live server: an application's `POST health` and a reporter's
/// `PUT deployments/{id}/health` take only what they say they take, each refusal naming the
/// problem and changing nothing; reporting is a reader's act over the whole config.
@Suite("API: health reports — their routes and refusals")
struct HealthRouteTests {
    static let c = try! ConfigName("c")
    static let id = "00000000000000a1"
    static let json = [("Content-Type", "application/json")]

    /// Config `c` with `/app/a` = 1 and a deployment of `/app/a` = 2 running over `/app/`.
    static func deploying(_ server: LiveServer) async throws {
        _ = try await server.store.createConfig(c, settings: ConfigSettings())
        _ = try await server.store.set(try Key("/app/a"), to: Data("1".utf8), in: c, options: SetOptions())
        let strategy = try DeploymentStrategy(growth: .linear, stepBasisPoints: 5000, intervalSeconds: 3600, bakeSeconds: 0)
        let plan = DeploymentPlan(id: id, prefix: try KeyPrefix("/app/"), entries: [.init(key: try Key("/app/a"), value: Data("2".utf8))], replace: false, strategy: strategy, signals: [.health])
        _ = try await server.store.changeDeployment(.start(plan), in: c)
    }

    static func report(errors: String = "1", requests: String = "10", reporter: String = "web-1#0a", at: String = "1767225600000", extra: String = "") -> String {
        #"{"reporter": "\#(reporter)", "stable": {"requests": 10, "errors": 0, "readers": 2}, "candidate": {"requests": \#(requests), "errors": \#(errors), "readers": 1}, "at": \#(at)\#(extra)}"#
    }

    @Test("POST health: every malformed report is 400 (or 404, 413) naming the field, nothing counted; a good one is 202 and reaches the store")
    func applicationReports() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.deploying(server)
            let refused: [(String, Int, String)] = [
                ("", 400, "body"), ("not json", 400, "body"), ("[1]", 400, "health"),
                (#"{"version": "both"}"#, 400, "health.version"), (#"{"requests": 1}"#, 400, "health.version"),
                (#"{"version": "candidate", "requests": 1, "errors": 2}"#, 400, "health.errors"),
                (#"{"version": "candidate"}"#, 400, "health"), (#"{"version": "candidate", "requests": 0, "errors": 0}"#, 400, "health"),
                (#"{"version": "candidate", "requests": -1}"#, 400, "health.requests"),
                (#"{"version": "candidate", "requests": 9223372036854775808}"#, 400, "health"),
                (#"{"version": "candidate", "requests": 18446744073709551616}"#, 400, "health.requests"),
                (#"{"version": "candidate", "requests": 1.5}"#, 400, "health.requests"),
                (#"{"version": "candidate", "requests": 1, "extra": true}"#, 400, "health"),
                (#"{"version": "candidate", "requests": null}"#, 400, "health.requests"),
                (#"{"version": "candidate", "requests": 1, "deployment": "../x"}"#, 400, "id"),
                (#"{"version": "candidate", "requests": 1, "deployment": "00000000000000b2"}"#, 404, "id"),
                (#"{"version": "candidate", "requests": 1, "pad": "\#(String(repeating: "x", count: 5000))"}"#, 413, "body"),
            ]
            for (body, status, field) in refused {
                let reply = try await server.request(.POST, "/v1/c/health", body: Data(body.utf8), headers: Self.json)
                #expect(reply.status == status, "\(body.prefix(80)): \(reply.text)")
                #expect(try reply.envelope().error?.field == field, "\(body.prefix(80)): \(reply.text)")
            }
            #expect(try await server.store.healthReports(deployment: Self.id, in: Self.c).isEmpty, "nothing refused was counted")
            let missing = try await server.request(.POST, "/v1/nope/health", body: Data(#"{"version": "stable", "requests": 1}"#.utf8), headers: Self.json)
            #expect(missing.status == 404, "\(missing.text)")

            let revision = try await server.store.configInfo(Self.c).revision
            let counted = try await server.request(.POST, "/v1/c/health", body: Data(#"{"version": "candidate", "requests": 12, "errors": 3}"#.utf8), headers: Self.json)
            #expect(counted.status == 202, "\(counted.text)")
            // The first report of a process that runs no loop is passed on at once.
            let reports = try await server.store.healthReports(deployment: Self.id, in: Self.c)
            #expect(reports.count == 1 && reports.first?.candidate.requests == 12 && reports.first?.candidate.errors == 3, "\(reports)")
            #expect(try await server.store.configInfo(Self.c).revision == revision, "a report makes no revision")
            let health = try await server.get("/v1/c/deployments/\(Self.id)/health")
            #expect(try health.envelope().health?.candidate.errors == 3 && health.envelope().reports?.count == 1, "\(health.text)")
            #expect(try await server.get("/v1/c/deployments").envelope().deployments?.first?.health?.reporters == 1, "the listing carries the sums")
        }
    }

    @Test("PUT deployments/{id}/health: a malformed report is 400 naming the field, a stopped deployment 404; a newer report replaces, an older does not")
    func reporterReports() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.deploying(server)
            let path = "/v1/c/deployments/\(Self.id)/health"
            let refused: [(String, String)] = [
                (Self.report(errors: "11"), "candidate"), (Self.report(reporter: "a/b"), "reporter"), (Self.report(reporter: ""), "reporter"),
                (Self.report(at: "-1"), "at"), (Self.report(at: "9223372036854775807"), "at"), (Self.report(requests: "18446744073709551616"), "counts.requests"),
                (Self.report(extra: #", "more": 1"#), "report"), (#"{"reporter": "r", "at": 1}"#, "report.stable"), ("{}", "report.reporter"),
                (Self.report().replacingOccurrences(of: #""readers": 1"#, with: #""readers": 1, "x": 0"#), "counts"),
            ]
            for (body, field) in refused {
                let reply = try await server.put(path, body, headers: Self.json)
                #expect(reply.status == 400, "\(body.prefix(100)): \(reply.text)")
                #expect(try reply.envelope().error?.field == field, "\(body.prefix(100)): \(reply.text)")
            }
            #expect(try await server.put("/v1/c/deployments/00000000000000b2/health", Self.report(), headers: Self.json).status == 404)
            #expect(try await server.put("/v1/c/deployments/zz/health", Self.report(), headers: Self.json).status == 400)
            #expect(try await server.store.healthReports(deployment: Self.id, in: Self.c).isEmpty)

            #expect(try await server.put(path, Self.report(errors: "5", at: "2000"), headers: Self.json).status == 200)
            #expect(try await server.put(path, Self.report(errors: "1", at: "1000"), headers: Self.json).status == 200)
            #expect(try await server.store.healthReports(deployment: Self.id, in: Self.c).first?.candidate.errors == 5, "the older report arriving late is dropped")
        }
    }

    @Test("access: a reader of the whole config reports and reads; a reader scoped to a prefix is refused (403); no token is 401")
    func access() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            try await Self.deploying(server)
            var tokens: [String: String] = [:]
            for (name, scopes) in [("reader", nil), ("prefix-reader", [try AccessScope("c:/app/")])] as [(String, [AccessScope]?)] {
                let (token, record) = try TokenFormat.generate(role: .read, scopes: scopes, description: name, now: Date())
                try await server.store.saveToken(record)
                tokens[name] = token
            }
            let bearer = { (name: String) in Self.json + [("Authorization", "Bearer \(tokens[name]!)")] }
            let observed = Data(#"{"version": "stable", "requests": 1}"#.utf8)
            #expect(try await server.request(.POST, "/v1/c/health", body: observed, headers: Self.json).status == 401)
            #expect(try await server.request(.POST, "/v1/c/health", body: observed, headers: bearer("prefix-reader")).status == 403)
            #expect(try await server.put("/v1/c/deployments/\(Self.id)/health", Self.report(), headers: bearer("prefix-reader")).status == 403)
            #expect(try await server.request(.POST, "/v1/c/health", body: observed, headers: bearer("reader")).status == 202)
            #expect(try await server.put("/v1/c/deployments/\(Self.id)/health", Self.report(), headers: bearer("reader")).status == 200)
            #expect(try await server.get("/v1/c/deployments/\(Self.id)/health", headers: bearer("reader")).status == 200)
        }
    }
}
