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
}
