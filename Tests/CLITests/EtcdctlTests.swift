import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg serve --etcd` with Debian's `etcdctl` (v3 API) as the client, on the embedded
/// store and on DynamoDB (moto). etcdctl is installed by `scripts/setup`; a machine
/// without it fails these tests, it does not skip them.
@Suite("etcd API: etcdctl against serve --etcd")
struct EtcdctlTests {
    @Test("put, get and del: prefixes, --from-key, --rev, --keys-only, --limit, --print-value-only, -w json", arguments: EtcdPeer.Backing.allCases)
    func keyValue(backing: EtcdPeer.Backing) async throws {
        let etcd = try await EtcdPeer.start(backing)
        do {
            #expect(try await etcd.ok("put", "/registry/pods/a", "alpha") == "OK\n")
            #expect(try await etcd.ok("put", "/registry/pods/b", "beta") == "OK\n")
            #expect(try await etcd.ok("put", "/registry/svc/x", "ex") == "OK\n")
            #expect(try await etcd.ok("put", "plain", "with spaces and ünïcode") == "OK\n")
            #expect(try await etcd.ok("put", "/registry/pods/a", "alpha2") == "OK\n")
            #expect(try await etcd.ok("get", "/registry/pods/a") == "/registry/pods/a\nalpha2\n")
            #expect(try await etcd.ok("get", "plain", "--print-value-only") == "with spaces and ünïcode\n")
            #expect(try await etcd.ok("get", "/registry/pods/", "--prefix", "--keys-only") == "/registry/pods/a\n\n/registry/pods/b\n\n")
            #expect(try await etcd.ok("get", "/registry/", "--prefix", "--limit", "2", "--print-value-only") == "alpha2\nbeta\n")
            #expect(try await etcd.ok("get", "/registry/svc", "--from-key", "--keys-only") == "/registry/svc/x\n\nplain\n\n")
            #expect(try await etcd.ok("get", "/registry/pods/a", "--rev", "2", "--print-value-only") == "alpha\n")
            #expect(try await etcd.ok("get", "/registry/pods/a", "--rev", "5", "--print-value-only") == "alpha\n")
            #expect(try await etcd.ok("get", "/registry/pods/b", "--rev", "2") == "", "b did not exist at revision 2")

            let json = try await etcd.json("get", "/registry/pods/", "--prefix")
            let header = try #require(json["header"] as? [String: Any])
            #expect(header["revision"] as? Int == 6)
            #expect(header["raft_term"] as? Int == 1)
            #expect((header["member_id"] as? NSNumber)?.uint64Value ?? 0 != 0)
            #expect(json["count"] as? Int == 2)
            let kvs = try #require(json["kvs"] as? [[String: Any]])
            #expect(kvs.compactMap { ($0["key"] as? String).flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) } } == ["/registry/pods/a", "/registry/pods/b"])
            #expect(kvs.first?["create_revision"] as? Int == 2)
            #expect(kvs.first?["mod_revision"] as? Int == 6)
            #expect(kvs.first?["version"] as? Int == 2)
            let limited = try await etcd.json("get", "/registry/", "--prefix", "--limit", "1")
            #expect(limited["count"] as? Int == 3, "count is every key of the range, more says the limit cut it")
            #expect(limited["more"] as? Bool == true)
            #expect((limited["kvs"] as? [Any])?.count == 1)

            #expect(try await etcd.ok("del", "/registry/pods/", "--prefix") == "2\n")
            #expect(try await etcd.ok("del", "nothing") == "0\n")
            #expect(try await etcd.ok("del", "plain", "--prev-kv") == "1\nplain\nwith spaces and ünïcode\n")
            #expect(try await etcd.ok("get", "", "--from-key", "--keys-only") == "/registry/svc/x\n\n")
            // One delete of two keys is one revision, as in etcd.
            let after = try await etcd.json("get", "/registry/svc/x")
            #expect((after["header"] as? [String: Any])?["revision"] as? Int == 8)

            // etcd keys are any bytes; discfg shows them in its own key form.
            let listed = try await etcd.cli.run("ls", "-r", "etcd", "--store", etcd.store)
            #expect(listed.stdout.contains("/.2Fregistry.2Fsvc.2Fx"), "\(listed.stdout)")
            let refused = try await etcd.etcdctl("get", "/registry/pods/a", "--rev", "99")
            #expect(refused.termination != .exited(0))
            #expect(refused.stderr.contains("required revision is a future revision"))

            // Compaction keeps the revision it compacts to, and drops the ones before.
            #expect(try await etcd.ok("compaction", "7") == "compacted revision 7\n")
            #expect(try await etcd.ok("get", "/registry/svc/x", "--rev", "7", "--print-value-only") == "ex\n")
            let compacted = try await etcd.etcdctl("get", "/registry/svc/x", "--rev", "6")
            #expect(compacted.stderr.contains("required revision has been compacted"), "\(compacted.stderr)")
            let again = try await etcd.etcdctl("compaction", "7")
            #expect(again.stderr.contains("required revision has been compacted"), "\(again.stderr)")
            let watchCompacted = try await etcd.etcdctl("watch", "/registry/", "--prefix", "--rev", "3")
            #expect(watchCompacted.stdout.contains("compacted") || watchCompacted.stderr.contains("compacted"), "\(watchCompacted.stdout) \(watchCompacted.stderr)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    /// What `etcdctl txn -i` prints before the responses when its input is not a terminal.
    static let prompts = "compares:\nsuccess requests (get, put, del):\nfailure requests (get, put, del):\n"

    @Test("txn -i: compares, success and failure branches, one revision", arguments: EtcdPeer.Backing.allCases)
    func transactions(backing: EtcdPeer.Backing) async throws {
        let etcd = try await EtcdPeer.start(backing)
        do {
            _ = try await etcd.ok("put", "lock", "free")
            _ = try await etcd.ok("put", "counter", "1")
            let won = try await etcd.ok("txn", "-i", stdin: "value(\"lock\") = \"free\"\nversion(\"counter\") > \"0\"\n\nput lock taken\nput owner me\nget counter\n\nget lock\n\n")
            #expect(won == Self.prompts + "SUCCESS\n\nOK\n\nOK\n\ncounter\n1\n", "\(won)")
            let lost = try await etcd.ok("txn", "-i", stdin: "value(\"lock\") = \"free\"\n\nput lock again\n\nget lock\n\n")
            #expect(lost == Self.prompts + "FAILURE\n\nlock\ntaken\n", "\(lost)")
            let state = try await etcd.json("get", "owner")
            let kvs = try #require(state["kvs"] as? [[String: Any]])
            #expect(kvs.first?["mod_revision"] as? Int == 4)
            let lock = try await etcd.json("get", "lock")
            #expect((lock["kvs"] as? [[String: Any]])?.first?["mod_revision"] as? Int == 4, "both puts of the transaction share revision 4")
            let created = try await etcd.ok("txn", "-i", stdin: "create(\"fresh\") = \"0\"\n\nput fresh 1\n\n\n")
            #expect(created.hasPrefix(Self.prompts + "SUCCESS"), "\(created)")
            let duplicate = try await etcd.etcdctl("txn", "-i", stdin: "\nput twice 1\nput twice 2\n\n\n")
            #expect(duplicate.stderr.contains("duplicate key given in txn request"), "\(duplicate.stderr)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("watch --rev replays, watch --prefix --prev-kv follows; a transaction arrives as one response", arguments: EtcdPeer.Backing.allCases)
    func watches(backing: EtcdPeer.Backing) async throws {
        let etcd = try await EtcdPeer.start(backing)
        do {
            _ = try await etcd.ok("put", "app/a", "1")
            _ = try await etcd.ok("put", "other", "x")
            let watcher = try ChildProcess.launch(
                "etcdctl", ["--endpoints=127.0.0.1:\(etcd.etcdPort)", "watch", "app/", "--prefix", "--prev-kv", "--rev", "1"],
                environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": etcd.cli.directory.path])
            )
            defer { Task { await watcher.kill() } }
            _ = try await watcher.waitForOutput(timeout: .seconds(30)) { $0.stdout.contains("app/a\n1\n") ? true : nil }
            _ = try await etcd.ok("txn", "-i", stdin: "\nput app/a 2\nput app/b 3\ndel other\n\n\n")
            _ = try await etcd.ok("del", "app/a")
            let seen = try await watcher.waitForOutput(timeout: .seconds(30)) { output -> String? in
                output.stdout.contains("DELETE\napp/a\n2\napp/a\n\n") ? output.stdout : nil
            }
            // Each event: its type, the previous key and value (--prev-kv), then the key and value.
            #expect(seen == "PUT\napp/a\n1\nPUT\napp/a\n1\napp/a\n2\nPUT\napp/b\n3\nDELETE\napp/a\n2\napp/a\n\n", "\(seen)")
            let json = try ChildProcess.launch(
                "etcdctl", ["--endpoints=127.0.0.1:\(etcd.etcdPort)", "watch", "app/", "--prefix", "--rev", "4", "-w", "json"],
                environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": etcd.cli.directory.path])
            )
            defer { Task { await json.kill() } }
            let line = try await json.waitForOutput(timeout: .seconds(30)) { output -> String? in
                output.stdout.split(separator: "\n").first { $0.contains("\"Events\"") && $0.contains("\"mod_revision\":4") }.map(String.init)
            }
            let response = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            // History comes packed, as etcd catches a watcher up: the transaction's two puts
            // under app/ (revision 4), never parted, and the delete after it (revision 5).
            let revisions = (response?["Events"] as? [[String: Any]])?.compactMap { ($0["kv"] as? [String: Any])?["mod_revision"] as? Int }
            #expect(revisions == [4, 4, 5], "the history from revision 4 in one response: \(line)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("leases: grant, put --lease, keep-alive, timetolive, list, revoke, and expiry deletes the keys in one revision", arguments: EtcdPeer.Backing.allCases)
    func leases(backing: EtcdPeer.Backing) async throws {
        let etcd = try await EtcdPeer.start(backing)
        do {
            let granted = try await etcd.ok("lease", "grant", "100")
            let id = try #require(granted.split(separator: " ").dropFirst().first.map(String.init), "\(granted)")
            #expect(granted == "lease \(id) granted with TTL(100s)\n")
            #expect(try await etcd.ok("put", "--lease=\(id)", "svc/a", "1") == "OK\n")
            #expect(try await etcd.ok("put", "--lease=\(id)", "svc/b", "2") == "OK\n")
            #expect(try await etcd.ok("put", "plain", "x") == "OK\n")
            let json = try await etcd.json("get", "svc/", "--prefix")
            let leaseIDs = (json["kvs"] as? [[String: Any]])?.compactMap { ($0["lease"] as? NSNumber)?.uint64Value }
            let expected = try #require(UInt64(id, radix: 16))
            #expect(leaseIDs == [expected, expected])
            let ttl = try await etcd.ok("lease", "timetolive", id, "--keys")
            #expect(ttl.hasPrefix("lease \(id) granted with TTL(100s), remaining("), "\(ttl)")
            #expect(ttl.hasSuffix("attached keys([svc/a svc/b])\n"), "\(ttl)")
            #expect(try await etcd.ok("lease", "keep-alive", "--once", id) == "lease \(id) keepalived with TTL(100)\n")
            #expect(try await etcd.ok("lease", "list") == "found 1 leases\n\(id)\n")
            #expect(try await etcd.ok("lease", "revoke", id) == "lease \(id) revoked\n")
            #expect(try await etcd.ok("get", "svc/", "--prefix") == "")
            #expect(try await etcd.ok("get", "plain", "--print-value-only") == "x\n")
            #expect(try await etcd.ok("lease", "timetolive", id) == "lease \(id) already expired\n")
            let missing = try await etcd.etcdctl("put", "--lease=\(id)", "svc/c", "3")
            #expect(missing.stderr.contains("requested lease not found"), "\(missing.stderr)")

            // A lease that runs out takes its keys with it, in one revision. Its TTL leaves
            // room for two puts from etcdctl on a loaded machine.
            let short = try #require(try await etcd.ok("lease", "grant", "8").split(separator: " ").dropFirst().first.map(String.init))
            _ = try await etcd.ok("put", "--lease=\(short)", "tmp/a", "1")
            _ = try await etcd.ok("put", "--lease=\(short)", "tmp/b", "2")
            let before = try await etcd.json("get", "plain")
            let revision = try #require((before["header"] as? [String: Any])?["revision"] as? Int)
            try await eventually("the lease's keys go with it", timeout: .seconds(90), interval: .milliseconds(500)) {
                try await etcd.ok("get", "tmp/", "--prefix", "--keys-only").isEmpty
            }
            let after = try await etcd.json("get", "plain")
            #expect((after["header"] as? [String: Any])?["revision"] as? Int == revision + 1, "both keys went in one revision")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("endpoint status and member list answer as a one-member cluster", arguments: EtcdPeer.Backing.allCases)
    func cluster(backing: EtcdPeer.Backing) async throws {
        let etcd = try await EtcdPeer.start(backing)
        do {
            _ = try await etcd.ok("put", "k", "v")
            let status = try await etcd.ok("endpoint", "status", "-w", "fields")
            #expect(status.contains("\"Version\" : \"3.5.0\""), "\(status)")
            #expect(status.contains("\"Revision\" : 2"), "\(status)")
            #expect(status.contains("\"IsLearner\" : false"), "\(status)")
            let members = try await etcd.ok("member", "list")
            let url = "http://127.0.0.1:\(etcd.etcdPort)"
            #expect(members.contains("started, discfg, \(url), \(url)"), "peer and client URL, the bound port, not the one asked for: \(members)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    /// (Beside required tokens serve does serve the etcd API, and refuses every call without one:
    /// `EtcdBoundsTests`.)
    @Test("serve refuses --etcd off loopback, and a bad address")
    func refusals() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        for address in ["0.0.0.0:2379", "nonsense", ":2379", "127.0.0.1:70000", "127.0.0.1:-1", "127.0.0.1:x"] {
            let refused = try await cli.run("serve", "--port", "0", "--etcd", address)
            #expect(refused.status == 2, "--etcd \(address)")
            #expect(refused.stderr.contains("--etcd"), "\(refused.stderr)")
        }
        let badConfig = try await cli.run("serve", "--port", "0", "--etcd", "127.0.0.1:0", "--etcd-config", "no/slash")
        #expect(badConfig.status == 2)
    }

    @Test("a client library from PyPI (aetcd), used as its README shows", arguments: EtcdPeer.Backing.allCases)
    func clientLibrary(backing: EtcdPeer.Backing) async throws {
        let etcd = try await EtcdPeer.start(backing)
        do {
            let run = try await ChildProcess.run(
                "python3", [PeerScript.path("aetcd_check.py"), String(etcd.etcdPort)], environment: ChildProcess.environment(["HOME": etcd.cli.directory.path]), timeout: .seconds(120)
            )
            #expect(run.termination == .exited(0), "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.hasSuffix("done\n"), "\(run.stdout)\(run.stderr)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("serve --max-connections bounds the etcd API's connections too: one more is closed at once, and served once another went")
    func connectionLimit() async throws {
        let etcd = try await EtcdPeer.start(.sqlite, ["--max-connections", "3"])
        do {
            let run = try await ChildProcess.run(
                "python3", [PeerScript.path("h2_abuse.py"), String(etcd.etcdPort), "--connection-limit", "3"],
                environment: ChildProcess.environment(["HOME": etcd.cli.directory.path]), timeout: .seconds(120)
            )
            #expect(run.termination == .exited(0), "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.split(separator: "\n").count == 5, "\(run.stdout)\(run.stderr)")
            #expect(etcd.server.isRunning)
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("HTTP/2 and gRPC framing under abuse: HTTP/1, garbage, not gRPC, malformed header blocks, vanishing clients, more unfinished messages than a connection holds, a silent one, and every rule of RFC 9113 broken in turn (stream errors reset the stream, connection errors end it with GOAWAY); the server goes on serving")
    func framingUnderAbuse() async throws {
        let etcd = try await EtcdPeer.start(.sqlite, ["--idle-timeout", "2"])
        do {
            let run = try await ChildProcess.run(
                "python3", [PeerScript.path("h2_abuse.py"), String(etcd.etcdPort)],
                environment: ChildProcess.environment(["HOME": etcd.cli.directory.path]), timeout: .seconds(120)
            )
            #expect(run.termination == .exited(0), "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.split(separator: "\n").count == 57, "\(run.stdout)\(run.stderr)")
            #expect(etcd.server.isRunning)
            #expect(try await etcd.ok("get", "after", "--print-value-only") == "abuse\n")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("HTTP/2 framing under 1,000 connections of random frames (every type and flag, lying lengths, streams past 2^31, windows and settings at their limits, gRPC prefixes past 4 MiB), sent whole or a byte at a time: the server answers a Put and a Range after every 50 and keeps running")
    func randomFrames() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let run = try await ChildProcess.run(
                "python3", [PeerScript.path("h2_fuzz.py"), String(etcd.etcdPort), "--seed", "1", "--connections", "1000"],
                environment: ChildProcess.environment(["HOME": etcd.cli.directory.path]), timeout: .seconds(300)
            )
            #expect(run.termination == .exited(0), "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.hasSuffix("the server still answers\n"), "\(run.stdout)\(run.stderr)")
            #expect(etcd.server.isRunning)
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }
}
