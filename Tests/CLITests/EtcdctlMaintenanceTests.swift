import DiscfgTestSupport
import Foundation
import Testing

/// etcdctl's maintenance commands against `serve --etcd`, answered as etcd answers them.
@Suite("etcd API: etcdctl's maintenance commands against serve --etcd")
struct EtcdctlMaintenanceTests {
    @Test("endpoint hashkv (and --rev), defrag, move-leader, alarm list and disarm, and snapshot save's refusal naming discfg export")
    func maintenance() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            _ = try await etcd.ok("put", "a", "1")
            _ = try await etcd.ok("put", "b", "2")
            let hashes = try await etcd.etcdctl("-w", "json", "endpoint", "hashkv")
            #expect(hashes.termination == .exited(0), "\(hashes.stderr)")
            #expect(hashes.stdout.contains("\"compact_revision\":-1"), "\(hashes.stdout)")
            let atTwo = try await etcd.ok("endpoint", "hashkv", "--rev", "2")
            _ = try await etcd.ok("put", "a", "3")
            #expect(try await etcd.ok("endpoint", "hashkv", "--rev", "2") == atTwo)
            #expect(try await etcd.ok("endpoint", "hashkv") != atTwo)
            let future = try await etcd.etcdctl("endpoint", "hashkv", "--rev", "99")
            #expect(future.stderr.contains("required revision is a future revision"), "\(future.stderr)")

            #expect(try await etcd.ok("defrag").contains("Finished defragmenting"))
            // member list names the member's id in hex, as move-leader takes it.
            let member = try #require(try await etcd.ok("member", "list").split(separator: ",").first)
            let itself = try await etcd.etcdctl("move-leader", String(member))
            #expect(itself.termination == .exited(0), "\(itself.stderr)")
            let other = try await etcd.etcdctl("move-leader", "1")
            #expect(other.stderr.contains("etcdserver: bad leader transferee"), "\(other.stderr)")

            #expect(try await etcd.ok("alarm", "list") == "")
            #expect(try await etcd.ok("alarm", "disarm") == "")

            let snapshot = try await etcd.etcdctl("snapshot", "save", etcd.cli.directory.appendingPathComponent("s.db").path)
            #expect(snapshot.termination != .exited(0))
            #expect(snapshot.stderr.contains("discfg export"), "\(snapshot.stderr)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("endpoint hashkv is one hash from two servers on one store, now and at a past revision", arguments: EtcdPeer.Backing.allCases)
    func hashKVAcrossServers(backing: EtcdPeer.Backing) async throws {
        let first = try await EtcdPeer.start(backing)
        let second = try await first.secondServer()
        defer { first.cli.cleanUp() }
        do {
            _ = try await first.ok("put", "a", "1")
            _ = try await second.ok("put", "b", "2")
            let header = try await first.json("get", "a")["header"] as? [String: Any]
            let past = try #require(header?["revision"] as? Int, "\(String(describing: header))")
            _ = try await first.ok("put", "a", "3")
            for revision in [nil, past] {
                let rev = revision.map { ["--rev", String($0)] } ?? []
                let hashes = [try await Self.hash(first, rev), try await Self.hash(second, rev)]
                #expect(hashes[0] == hashes[1], "\(backing), revision \(revision.map(String.init) ?? "now"): \(hashes)")
            }
            let now = try await Self.hash(first, [])
            #expect(try await Self.hash(first, ["--rev", String(past)]) != now)
        } catch {
            await first.server.stop()
            await second.server.stop()
            throw error
        }
        await first.server.stop()
        await second.server.stop()
    }

    /// The `hash` of `endpoint hashkv` through `peer`, with `rev` (`--rev N`) if given.
    static func hash(_ peer: EtcdPeer, _ rev: [String]) async throws -> Int {
        let output = try await ChildProcess.run(
            "etcdctl", ["--endpoints=127.0.0.1:\(peer.etcdPort)", "--command-timeout=60s", "-w", "json", "endpoint", "hashkv"] + rev,
            environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": peer.cli.directory.path]), timeout: .seconds(120)
        )
        #expect(output.termination == .exited(0), "\(output.stderr)")
        let list = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]]
        let hashKV = list?.first?["HashKV"] as? [String: Any]
        return try #require(hashKV?["hash"] as? Int, "\(output.stdout)")
    }
}
