import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The same `etcdctl` commands against a real etcd and against `discfg serve --etcd` (on
/// the embedded store, and on DynamoDB served by moto), their outputs compared: simple output byte for byte, `-w json`
/// output field by field.
///
/// Each test starts a fresh pair: Debian's `etcd` (installed by `scripts/setup` with
/// `etcd-server`) on free loopback ports with a scratch data directory, and `discfg serve
/// --etcd`. A machine without `etcd` fails these tests, it does not skip them.
///
/// Revisions are compared in discfg's numbering: etcd's differ from discfg's by one
/// constant per pair (etcd's empty store is at revision 1, discfg's empty config at 0),
/// measured from the first response of each pair and expected everywhere after. A command
/// that names a revision writes it as `{rev:N}` (N in discfg's numbering), and each side
/// reads it in its own. The header's `cluster_id`, `member_id` and `raft_term` are
/// checked present and nonzero on both, and not compared.
@Suite("etcd compatibility: etcdctl against etcd and against serve --etcd", .serialized)
struct EtcdCompatibilityTests {
    typealias Output = ChildProcess.Output

    // MARK: Scenarios

    @Test("put, get and del: --prefix, --from-key, --rev, --keys-only, --limit, --print-value-only, -w json, --prev-kv", arguments: EtcdPeer.Backing.allCases)
    func keyValue(_ backing: EtcdPeer.Backing) async throws {
        try await Self.withPair(backing) { pair in
            // History: revisions 1 to 8 in discfg's numbering.
            #expect(try await pair.same("put", "/registry/pods/a", "alpha") == "OK\n")
            try await pair.same("put", "/registry/pods/b", "beta")
            try await pair.same("put", "/registry/svc/x", "ex")
            try await pair.same("put", "plain", "with spaces and ünïcode")
            try await pair.same("put", "/registry/pods/a", "alpha2")
            try await pair.same("del", "/registry/pods/b")
            try await pair.sameJSON("put", "/registry/pods/b", "beta2", "--prev-kv")
            try await pair.sameJSON("put", "/registry/pods/a", "alpha3", "--prev-kv")
            try await pair.same("put", "ключ/ü", "значение")

            let reads: [[String]] = [
                ["get", "/registry/pods/a"],
                ["get", "plain", "--print-value-only"],
                ["get", "nothing"],
                ["get", "/registry/pods/", "--prefix"],
                ["get", "/registry/pods/", "--prefix", "--keys-only"],
                ["get", "/registry/", "--prefix", "--limit", "2", "--print-value-only"],
                ["get", "/registry/", "--prefix", "--limit", "1"],
                ["get", "/registry/", "--prefix", "--limit", "3"],
                ["get", "/registry/svc", "--from-key", "--keys-only"],
                ["get", "", "--from-key"],
                ["get", "", "--from-key", "--limit", "2", "--keys-only"],
                ["get", "/registry/pods/a", "/registry/svc/x"],
                ["get", "/registry/", "--prefix", "--sort-by=MODIFY", "--order=DESCEND"],
                ["get", "", "--from-key", "--sort-by=VERSION", "--order=ASCEND", "--keys-only"],
                ["get", "/registry/pods/a", "--rev", "{rev:2}", "--print-value-only"],
                ["get", "/registry/pods/a", "--rev", "{rev:5}"],
                ["get", "/registry/pods/b", "--rev", "{rev:2}"],
                ["get", "/registry/pods/b", "--rev", "{rev:7}"],
                ["get", "/registry/", "--prefix", "--rev", "{rev:4}", "--limit", "1", "--keys-only"],
                ["get", "/registry/svc", "--from-key", "--rev", "{rev:8}"],
                ["get", "ключ/", "--prefix"],
            ]
            for read in reads {
                try await pair.same(read)
                // JSON has no --print-value-only: etcdctl refuses the two together.
                if !read.contains("--print-value-only") { try await pair.sameJSON(read) }
            }
            // Every key at every revision so far, and now.
            for revision in 1...9 {
                try await pair.same("get", "", "--from-key", "--rev", "{rev:\(revision)}")
                try await pair.sameJSON("get", "", "--from-key", "--rev", "{rev:\(revision)}")
            }

            #expect(try await pair.same("del", "/registry/pods/", "--prefix", "--prev-kv") == "2\n/registry/pods/a\nalpha3\n/registry/pods/b\nbeta2\n")
            #expect(try await pair.same("del", "nothing") == "0\n")
            try await pair.sameJSON("del", "nothing", "--prev-kv")
            try await pair.sameJSON("del", "plain", "--prev-kv")
            try await pair.same("put", "z1", "1")
            try await pair.same("put", "z2", "2")
            try await pair.sameJSON("del", "z", "--from-key", "--prev-kv")
            try await pair.same("del", "ключ/ü", "--prev-kv")
            try await pair.sameJSON("put", "again", "1")
            try await pair.sameJSON("put", "again", "2", "--prev-kv")
            for read in [["get", "", "--from-key"], ["get", "", "--from-key", "--rev", "{rev:10}"], ["get", "", "--from-key", "--rev", "{rev:13}"]] {
                try await pair.same(read)
                try await pair.sameJSON(read)
            }
        }
    }

    /// What `etcdctl txn -i` reads: compares, a blank line, success requests, a blank
    /// line, failure requests, a blank line.
    static func txn(_ compares: [String], success: [String], failure: [String]) -> String {
        [compares, success, failure].map { $0.map { $0 + "\n" }.joined() + "\n" }.joined()
    }

    @Test("txn -i: compares that hold and that fail, both branches with get, put and del", arguments: EtcdPeer.Backing.allCases)
    func transactions(_ backing: EtcdPeer.Backing) async throws {
        try await Self.withPair(backing) { pair in
            try await pair.same("put", "lock", "free")
            try await pair.same("put", "counter", "1")
            try await pair.same("put", "gone", "bye")

            let held = try await pair.same("txn", "-i", stdin: Self.txn(
                [#"value("lock") = "free""#, #"version("counter") > "0""#, #"mod("counter") = "{rev:3}""#, #"create("gone") = "{rev:4}""#],
                success: ["get lock", "put lock taken", "get counter", "del gone --prev-kv", "put owner me", "get lock", "del nothing"],
                failure: ["get lock", "put never x", "del counter"]
            ))
            #expect(held.contains("SUCCESS"), "\(held)")
            let failed = try await pair.same("txn", "-i", stdin: Self.txn(
                [#"value("lock") = "free""#],
                success: ["put lock again", "del counter"],
                failure: ["get lock", "put loser 1 --prev-kv", "del counter --prev-kv", "get counter", "get owner"]
            ))
            #expect(failed.contains("FAILURE"), "\(failed)")

            // The same shapes as JSON: every response, its header's revision included.
            try await pair.sameJSON("txn", "-i", stdin: Self.txn(
                [#"mod("lock") = "{rev:5}""#, #"version("missing") = "0""#],
                success: ["get lock", "del nothing", "get lock", "put lock x --prev-kv", "del loser --prev-kv", "get lo --prefix", "get loser"],
                failure: ["get never"]
            ))
            try await pair.sameJSON("txn", "-i", stdin: Self.txn(
                [#"create("never") > "0""#, #"value("lock") = "x""#],
                success: ["put never 1"],
                failure: ["get lock", #"get "" --from-key --keys-only"#, "del lock --prev-kv", "put after 1", "get after", "get lock"]
            ))
            // Read only: no new revision.
            try await pair.sameJSON("txn", "-i", stdin: Self.txn(
                [#"value("missing") = """#],
                success: ["get after"],
                failure: [#"get "" --from-key"#, "get a z --limit 1", "del nothing"]
            ))
            try await pair.sameJSON("txn", "-i", stdin: Self.txn([], success: [], failure: []))
            try await pair.same("get", "", "--from-key")
            try await pair.sameJSON("get", "", "--from-key")
        }
    }

    @Test("watch --rev 1 --prefix --prev-kv over puts, transactions and deletes, and a watch replaying history", arguments: EtcdPeer.Backing.allCases)
    func watches(_ backing: EtcdPeer.Backing) async throws {
        try await Self.withPair(backing) { pair in
            try await pair.same("put", "app/a", "1")
            try await pair.same("put", "other", "x")
            let follow = ["watch", "app/", "--prefix", "--prev-kv", "--rev", "{rev:2}"]
            var watchers: [ChildProcess] = []
            do {
                for side in [pair.etcd, pair.discfg] { watchers.append(try side.launch(follow)) }
                let text = (etcd: watchers[0], discfg: watchers[1])
                for side in [pair.etcd, pair.discfg] { watchers.append(try side.launch(["-w", "json"] + follow)) }
                let json = [watchers[2], watchers[3]]
                try await Self.awaitEvents(1, json)

                try await pair.same("txn", "-i", stdin: Self.txn([], success: ["put app/a 2", "put app/b 3", "del other"], failure: []))
                try await Self.awaitEvents(3, json)
                try await pair.same("del", "app/a")
                try await Self.awaitEvents(4, json)
                try await pair.same("txn", "-i", stdin: Self.txn(
                    [#"value("app/b") = "nope""#], success: ["put app/x no"], failure: ["put app/c 4", "get app/b", "put app/d 5", "del missing"]
                ))
                try await Self.awaitEvents(6, json)
                #expect(try await pair.same("del", "app/", "--prefix") == "3\n")
                try await Self.awaitEvents(9, json)
                try await pair.same("put", "other", "y")
                try await pair.same("put", "app/end", "done")
                try await Self.awaitEvents(10, json)
                for watcher in [text.etcd, text.discfg] {
                    _ = try await watcher.waitForOutput(timeout: .seconds(120)) { $0.stdout.contains("PUT\napp/end\ndone\n") ? true : nil }
                }
                // A watch begun after all of it replays it from history.
                let replay = ["-w", "json", "watch", "app/", "--prefix", "--rev", "{rev:4}"]
                for side in [pair.etcd, pair.discfg] { watchers.append(try side.launch(replay)) }
                let replaying = [watchers[4], watchers[5]]
                try await Self.awaitEvents(9, replaying)
                for watcher in watchers { await watcher.kill() }

                let etcdText = text.etcd.output.stdout, discfgText = text.discfg.output.stdout
                #expect(discfgText == etcdText, "etcdctl \(follow.joined(separator: " "))\netcd:\n\(etcdText)\ndiscfg:\n\(discfgText)")
                #expect(etcdText.hasPrefix("PUT\napp/a\n1\nPUT\napp/a\n1\napp/a\n2\nPUT\napp/b\n3\nDELETE\napp/a\n2\napp/a\n\n"), "\(etcdText)")
                for (command, printed) in [("etcdctl -w json \(follow.joined(separator: " "))", json), ("etcdctl \(replay.joined(separator: " "))", replaying)] {
                    let onEtcd = Self.watchEvents(printed[0].output.stdout, side: pair.etcd, command: command)
                    let onDiscfg = Self.watchEvents(printed[1].output.stdout, side: pair.discfg, command: command)
                    #expect(onEtcd.count == (command.contains("prev-kv") ? 10 : 9))
                    #expect(onDiscfg.count == onEtcd.count, "\(command)\netcd:\n\(onEtcd.joined(separator: "\n"))\ndiscfg:\n\(onDiscfg.joined(separator: "\n"))")
                    for (index, (etcdEvent, discfgEvent)) in zip(onEtcd, onDiscfg).enumerated() {
                        #expect(discfgEvent == etcdEvent, "\(command): event \(index)\netcd (revisions less \(pair.etcd.offset)):\n\(etcdEvent)\ndiscfg:\n\(discfgEvent)")
                    }
                }
            } catch {
                for watcher in watchers { await watcher.kill() }
                throw error
            }
        }
    }

    @Test("errors: a future revision, a duplicate key in a txn, no key; endpoint status and member list", arguments: EtcdPeer.Backing.allCases)
    func errorsAndCluster(_ backing: EtcdPeer.Backing) async throws {
        try await Self.withPair(backing) { pair in
            try await pair.same("put", "k", "v")
            try await pair.same("put", "app/c", "1")
            try await pair.sameFailure("get", "k", "--rev", "{rev:1001}")
            try await pair.sameFailure("get", "", "--from-key", "--rev", "{rev:4}")
            try await pair.sameFailure("get", "k", "--rev", "{rev:4}", "-w", "json")
            try await pair.same("get", "k", "--rev", "{rev:3}")
            try await pair.sameFailure("txn", "-i", stdin: Self.txn([], success: ["put twice 1", "put twice 2"], failure: []))
            try await pair.sameFailure("txn", "-i", stdin: Self.txn([], success: [], failure: ["put twice 1", "del twice"]))
            try await pair.sameFailure("txn", "-i", stdin: Self.txn([], success: ["del app/ --prefix", "put app/c 2"], failure: []))
            try await pair.sameFailure("put", "", "x")
            try await pair.sameFailure("get", "")
            try await pair.sameFailure("del", "")
            // None of the refused writes made a revision.
            try await pair.sameJSON("get", "", "--from-key")

            // A watch of history compacted away: etcd's cancel, field by field, and the
            // same exit.
            for side in [pair.etcd, pair.discfg] {
                let compacted = try await side.etcdctl(["compaction", "{rev:3}"])
                #expect(compacted.termination == .exited(0), "\(side.name): compaction: \(compacted.logs)")
            }
            let watch = try await pair.both(["watch", "k", "--rev", "{rev:2}", "-w", "json"])
            #expect(watch.etcd.termination != .exited(0), "etcd: \(watch.etcd.logs)")
            #expect(watch.discfg.termination == watch.etcd.termination, "etcd: \(watch.etcd.logs)\ndiscfg: \(watch.discfg.logs)")
            let command = "etcdctl watch k --rev {rev:2} -w json"
            let onEtcd = try pair.normalizedJSON(Pair.lastLine(watch.etcd.stdout), side: pair.etcd, command: command, sourceLocation: #_sourceLocation)
            let onDiscfg = try pair.normalizedJSON(Pair.lastLine(watch.discfg.stdout), side: pair.discfg, command: command, sourceLocation: #_sourceLocation)
            #expect(onDiscfg == onEtcd, "\(command)\netcd (revisions less \(pair.etcd.offset)):\n\(onEtcd)\ndiscfg:\n\(onDiscfg)")
            #expect(onEtcd.contains(#""CompactRevision":3"#), "\(onEtcd)")

            // Not compared: the version and database size differ by nature.
            let status = try await pair.both(["endpoint", "status", "-w", "json"])
            let members = try await pair.both(["member", "list", "-w", "json"])
            for (side, status, members) in [(pair.etcd, status.etcd, members.etcd), (pair.discfg, status.discfg, members.discfg)] {
                #expect(status.termination == .exited(0), "\(side.name): endpoint status: \(status.logs)")
                let statuses = try JSONSerialization.jsonObject(with: status.stdoutData) as? [[String: Any]] ?? []
                #expect(statuses.count == 1, "\(side.name): \(status.stdout)")
                let header = (statuses.first?["Status"] as? [String: Any])?["header"] as? [String: Any]
                let member = (header?["member_id"] as? NSNumber)?.uint64Value ?? 0
                #expect(member != 0, "\(side.name): \(status.stdout)")
                #expect(((statuses.first?["Status"] as? [String: Any])?["leader"] as? NSNumber)?.uint64Value == member, "\(side.name): its own leader: \(status.stdout)")

                #expect(members.termination == .exited(0), "\(side.name): member list: \(members.logs)")
                let list = try JSONSerialization.jsonObject(with: members.stdoutData) as? [String: Any] ?? [:]
                let listed = list["members"] as? [[String: Any]] ?? []
                #expect(listed.count == 1, "\(side.name): \(members.stdout)")
                #expect((listed.first?["ID"] as? NSNumber)?.uint64Value == member, "\(side.name): \(members.stdout)")
                #expect((listed.first?["clientURLs"] as? [String]) == ["http://127.0.0.1:\(side.port)"], "\(side.name): \(members.stdout)")
                // Clients read it unguarded (etcd3gw's `member['peerURLs']`): never left out.
                #expect((listed.first?["peerURLs"] as? [String])?.isEmpty == false, "\(side.name): \(members.stdout)")
            }
        }
    }

    @Test("edges: numbers at 0, -1 and 2^63-1, bytes that are no message, an oversized message, unknown methods, nested txns deep and duplicated get etcd's gRPC status", arguments: EtcdPeer.Backing.allCases)
    func edges(_ backing: EtcdPeer.Backing) async throws {
        try await Self.withPair(backing) { pair in
            async let onEtcd = ChildProcess.run("python3", [PeerScript.path("grpc_edges.py"), String(pair.etcd.port)], environment: pair.etcd.environment, timeout: .seconds(180))
            async let onDiscfg = ChildProcess.run("python3", [PeerScript.path("grpc_edges.py"), String(pair.discfg.port)], environment: pair.discfg.environment, timeout: .seconds(180))
            let (etcd, discfg) = try await (onEtcd, onDiscfg)
            #expect(etcd.termination == .exited(0), "etcd: \(etcd.logs)")
            #expect(discfg.termination == .exited(0), "discfg: \(discfg.logs)")
            let etcdLines = etcd.stdout.split(separator: "\n"), discfgLines = discfg.stdout.split(separator: "\n")
            #expect(etcdLines.count == 44, "\(etcd.stdout)")
            #expect(discfgLines.count == etcdLines.count, "etcd:\n\(etcd.stdout)\ndiscfg:\n\(discfg.stdout)")
            for (etcdLine, discfgLine) in zip(etcdLines, discfgLines) {
                // etcd serves Auth (and refuses it while no root user exists); discfg does not.
                if etcdLine.hasPrefix("unknown service:") {
                    #expect(discfgLine == "unknown service: UNIMPLEMENTED")
                } else if etcdLine.hasPrefix("txn nested 17 deep:") {
                    // etcd sets no bound on nesting; discfg's is 16.
                    #expect(etcdLine == "txn nested 17 deep: OK")
                    #expect(discfgLine == "txn nested 17 deep: INVALID_ARGUMENT")
                } else {
                    #expect(discfgLine == etcdLine)
                }
            }
        }
    }
}
