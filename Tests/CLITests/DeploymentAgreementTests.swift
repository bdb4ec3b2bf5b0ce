import AsyncHTTPClient
import DiscfgClient
import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOCore
import Testing

/// Every evaluator gives one entity one version of a staged deployment at one instant:
/// `serve`, an agent and the Swift client (computing it from the record it follows),
/// checked over 10,000 entities against each other and against the documented rule.
@Suite("CLI: serve, the agent and the Swift client agree on every entity's version")
struct DeploymentAgreementTests {
    static let entities = (0..<10_000).map { "user-\($0)" }

    @Test("10,000 entities: the same version from serve, the agent and the Swift client, and 30 % ± 3 points exposed")
    func agreement() async throws {
        let cli = try CLIRunner()
        for arguments in [["create", "demo"], ["set", "demo", "/app/a", "stable"]] {
            #expect(try await cli.run(arguments).status == 0)
        }
        _ = try cli.write("candidate.json", Data(#"{"/app/a": "candidate"}"#.utf8))
        let started = try await cli.run(
            "deploy", "start", "demo", "--prefix", "/app/", "-d", "candidate.json", "--strategy", "linear", "--step", "30", "--interval", "1h", "--bake", "0s"
        )
        #expect(started.status == 0, "\(started.stderr)")
        let (server, serverPort) = try await cli.serve(["--monitor-interval", "0"])
        let (agent, agentPort) = try await cli.agent()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let client = try ConfigClient(url: URL(string: "http://127.0.0.1:\(serverPort)")!)
            let config = try await client.config("demo")
            try await config.followChanges()
            let deployment = try await Self.deployment(cli)
            var exposed = 0
            var disagreements: [String] = []
            for entity in Self.entities {
                let rule = deployment.seesCandidate(entity: entity, at: SystemClock().now().milliseconds) ? "candidate" : "stable"
                let fromServer = try await Self.read(http, port: serverPort, entity: entity)
                let fromAgent = try await Self.read(http, port: agentPort, entity: entity)
                let fromClient = try await config.item("/app/a", as: entity).map { String(decoding: $0.value, as: UTF8.self) }
                if fromServer != rule || fromAgent != rule || fromClient != rule {
                    disagreements.append("\(entity): rule \(rule), serve \(fromServer), agent \(fromAgent), client \(fromClient ?? "nil")")
                }
                if rule == "candidate" { exposed += 1 }
            }
            #expect(disagreements.isEmpty, "\(disagreements.count) disagree, first: \(disagreements.prefix(3))")
            #expect((2_700...3_300).contains(exposed), "30 % ± 3 points of 10,000: \(exposed)")
        } catch {
            Issue.record(error)
        }
        try await http.shutdown()
        await agent.kill()
        await server.kill()
    }

    static func deployment(_ cli: CLIRunner) async throws -> Deployment {
        let status = try await cli.run("deploy", "status", "demo", "-f", "json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let record = try JSONSerialization.data(withJSONObject: try #require(object["deployment"]))
        return try JSONDecoder().decode(Deployment.self, from: record)
    }

    static func read(_ http: HTTPClient, port: Int, entity: String) async throws -> String {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/demo/keys/app/a?raw")
        request.headers.add(name: "Discfg-Entity", value: entity)
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        return String(buffer: body)
    }
}
