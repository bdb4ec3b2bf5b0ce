import DiscfgTestSupport
import Foundation
import Testing

/// etcd's alarms against `serve --etcd`: one raised by a client is kept in the store and
/// refused alike on every face until etcdctl disarms it.
@Suite("etcd API: an alarm raised by a client, refused on every face until disarmed")
struct EtcdAlarmTests {
    /// One `Maintenance/Alarm` call of `action` on NOSPACE by a gRPC client
    /// (``Tests/Peers/etcd_call.py``): its status and the alarms it answered.
    static func alarm(_ etcd: EtcdPeer, _ action: String) async throws -> (code: String, alarms: [String]) {
        let output = try await ChildProcess.run(
            "python3", [PeerScript.path("etcd_call.py"), String(etcd.etcdPort), "alarm", action],
            environment: ChildProcess.environment(["HOME": etcd.cli.directory.path]), timeout: .seconds(120)
        )
        let line = try #require(output.stdout.split(separator: "\n").last, "etcd_call.py printed nothing: \(output.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return (json["code"] as? String ?? "?", json["alarms"] as? [String] ?? [])
    }

    @Test("ACTIVATE of NOSPACE: alarm list shows it, etcdctl's put and lease grant get etcd's NOSPACE, REST writes 507, the gateway lists it, discfg info names it; reads and deletes pass; alarm disarm clears it")
    func activateAndDisarm() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            _ = try await etcd.ok("put", "a", "1")
            _ = try await etcd.ok("put", "b", "2")
            let raised = try await Self.alarm(etcd, "activate")
            #expect(raised.code == "OK")
            #expect(raised.alarms == ["NOSPACE"])
            #expect(try await etcd.ok("alarm", "list").contains("alarm:NOSPACE"))

            let refusals = [
                ("put", try await etcd.etcdctl("put", "c", "3")),
                ("lease grant", try await etcd.etcdctl("lease", "grant", "60")),
                ("txn with a put", try await etcd.etcdctl("txn", "-i", stdin: "\nput c 3\n\n\n")),
            ]
            for (name, refused) in refusals {
                #expect(refused.termination != .exited(0), "\(name)")
                #expect(refused.stderr.contains("etcdserver: mvcc: database space exceeded"), "\(name): \(refused.stderr)")
            }
            let restPort = try await etcd.server.announcedPort()
            let rest = try await LoopbackHTTP.exchange(port: restPort, "PUT /v1/etcd/keys/rest", body: Data("v".utf8))
            #expect(rest.hasPrefix("HTTP/1.1 507"), "\(rest)")
            #expect(rest.contains("\"quotaExceeded\"") && rest.contains("NOSPACE"), "\(rest)")
            let gateway = try await LoopbackHTTP.exchange(port: etcd.etcdPort, "POST /v3/maintenance/alarm", body: Data("{}".utf8))
            #expect(gateway.hasPrefix("HTTP/1.1 200") && gateway.contains("NOSPACE"), "\(gateway)")
            let info = try await etcd.cli.run("info", "etcd")
            // etcd_call.py names no member: the alarm is member 0's, shown with its id.
            #expect(info.stdout.contains("NOSPACE@0 raised"), "\(info.stdout)")

            #expect(try await etcd.ok("get", "a", "--print-value-only") == "1\n")
            #expect(try await etcd.ok("del", "a") == "1\n")
            #expect(try await etcd.ok("alarm", "disarm").contains("alarm:NOSPACE"))
            #expect(try await etcd.ok("alarm", "list") == "")
            #expect(try await Self.alarm(etcd, "get").alarms == [])
            #expect(try await etcd.ok("put", "c", "3") == "OK\n")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }
}
