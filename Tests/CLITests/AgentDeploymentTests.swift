import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// An agent reads a staged deployment as its host's entity: `--instance-id` (or an id kept
/// with its cache) decides which version a plain read through it gets, a reader's own
/// `Discfg-Entity` wins, and the answer agrees with the rule every face computes.
@Suite("CLI: agents and staged deployments")
struct AgentDeploymentTests {
    @Test("each agent reads the version its instance id is given; a reader naming an entity gets that entity's")
    func instances() async throws {
        let cli = try CLIRunner()
        for arguments in [["create", "demo"], ["set", "demo", "/app/a", "1"], ["set", "demo", "/web/x", "1"]] {
            #expect(try await cli.run(arguments).status == 0)
        }
        _ = try cli.write("candidate.json", Data(#"{"/app/a": "10"}"#.utf8))
        let started = try await cli.run(
            "deploy", "start", "demo", "--prefix", "/app/", "-d", "candidate.json", "--strategy", "linear", "--step", "50", "--interval", "1h", "--bake", "0s", "-m", "ten"
        )
        #expect(started.status == 0, "\(started.stderr)")
        let status = try await cli.run("deploy", "status", "demo", "-f", "json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let id = try #require((object["deployment"] as? [String: Any])?["id"] as? String)
        let hosts = (0..<40).map { "host-\($0)" }
        let exposed = try #require(hosts.first { Deployment.bucket(deploymentID: id, entity: $0) < 5_000 })
        let hidden = try #require(hosts.first { Deployment.bucket(deploymentID: id, entity: $0) >= 5_000 })
        for (instance, expected) in [(exposed, "10"), (hidden, "1")] {
            let (agent, port) = try await cli.agent(["--instance-id", instance])
            defer { Task { await agent.kill() } }
            let plain = try await LoopbackHTTP.exchange(port: port, "GET /v1/demo/keys/app/a?raw", body: Data())
            #expect(plain.hasSuffix("\r\n\r\n\(expected)"), "\(instance): \(plain)")
            #expect(plain.contains("Discfg-Deployment: \(id);") || plain.lowercased().contains("discfg-deployment: \(id);"), "\(plain)")
            for other in [exposed, hidden] {
                let named = try await LoopbackHTTP.exchange(port: port, "GET /v1/demo/keys/app/a?raw", body: Data(), headers: ["Discfg-Entity: \(other)"])
                #expect(named.hasSuffix("\r\n\r\n\(other == exposed ? "10" : "1")"), "\(instance) asked for \(other): \(named)")
            }
            let outside = try await LoopbackHTTP.exchange(port: port, "GET /v1/demo/keys/web/x?raw", body: Data())
            #expect(outside.hasSuffix("\r\n\r\n1"))
            await agent.kill()
        }
        let bad = try await cli.run("agent", "--config", "demo", "--instance-id", "", "--port", "0")
        #expect(bad.status != 0 && bad.stderr.contains("--instance-id"), "\(bad.stderr)")
    }
}
