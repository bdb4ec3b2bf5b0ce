import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `serve --etcd` under the attacks of issue 33 on its services, as an anonymous etcd
/// client makes them (etcdctl, and `Tests/Peers/etcd_bounds.py` over grpcio): tokens
/// created while it runs close it; only etcd keys are reached; answers are bounded
/// before they are built (peak RSS measured); watchers per connection are capped; a
/// Txn's size is checked before it is decoded.
@Suite("etcd API: access, keys and answers under attack")
struct EtcdBoundsTests {
    /// Runs `etcd_bounds.py mode port arguments…` and returns its output lines.
    static func peer(_ mode: String, _ peer: EtcdPeer, _ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        let output = try await ChildProcess.run(
            "python3", [PeerScript.path("etcd_bounds.py"), mode, String(peer.etcdPort)] + arguments,
            environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment), timeout: .seconds(180)
        )
        #expect(output.termination == .exited(0), "etcd_bounds.py \(mode): \(output.stderr)", sourceLocation: sourceLocation)
        print(output.stdout)
        return output.stdout.split(separator: "\n").map(String.init)
    }

    /// The server's peak and current resident memory, in MiB.
    static func memory(_ peer: EtcdPeer) throws -> (peak: Int, now: Int) {
        let status = try String(contentsOfFile: "/proc/\(peer.server.pid)/status", encoding: .utf8)
        let peak = try #require(ServeMemoryTests.kilobytes("VmHWM", in: status)) / 1024
        let now = try #require(ServeMemoryTests.kilobytes("VmRSS", in: status)) / 1024
        return (peak, now)
    }

    static let userEmpty = "etcdserver: user name is empty"

    @Test("a token created while serve --etcd runs closes the etcd API to callers without one within seconds: put, get, del, compaction and watch are refused, an open watch ends, and nothing changes", .timeLimit(.minutes(4)))
    func tokenCreatedWhileServing() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            #expect(try await etcd.ok("put", "a", "1") == "OK\n")
            let watcher = try ChildProcess.launch(
                "python3", [PeerScript.path("etcd_bounds.py"), "token-watch", String(etcd.etcdPort)], environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment)
            )
            _ = try await watcher.waitForOutput(timeout: .seconds(60)) { output -> Bool? in output.stdout.contains("watching") ? true : nil }

            let created = try await etcd.cli.run("token", "create", "--role", "admin")
            #expect(created.status == 0, "\(created.stderr)")
            // The server reads the token state every 0.5 s: refused within a few seconds.
            try await eventually("etcdctl get is refused once the token exists", interval: .milliseconds(250)) {
                let get = try await etcd.etcdctl("get", "a")
                return get.termination != .exited(0) && get.stderr.contains(Self.userEmpty)
            }
            for arguments in [["put", "a", "3"], ["get", "a"], ["get", "", "--prefix"], ["del", "a"], ["compaction", "1"], ["lease", "grant", "60"], ["endpoint", "status"]] {
                let output = try await ChildProcess.run(
                    "etcdctl", ["--endpoints=127.0.0.1:\(etcd.etcdPort)", "--command-timeout=30s"] + arguments,
                    environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": etcd.cli.directory.path]), timeout: .seconds(60)
                )
                #expect(output.termination != .exited(0), "etcdctl \(arguments.joined(separator: " ")) was served: \(output.stdout)")
                #expect(output.stderr.contains(Self.userEmpty), "etcdctl \(arguments.joined(separator: " ")): \(output.stderr)")
            }
            let watch = try await ChildProcess.run(
                "etcdctl", ["--endpoints=127.0.0.1:\(etcd.etcdPort)", "watch", "a"],
                environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": etcd.cli.directory.path]), timeout: .seconds(60)
            )
            #expect(watch.termination != .exited(0))
            #expect((watch.stdout + watch.stderr).contains(Self.userEmpty), "etcdctl watch: \(watch.stdout) \(watch.stderr)")

            // The watch opened before the token saw nothing written after it.
            #expect(try await etcd.cli.run("set", "etcd", "/t1", "written after the token").status == 0)
            let ended = try await watcher.waitForOutput(timeout: .seconds(30)) { output -> String? in
                output.stdout.split(separator: "\n").first { $0.hasPrefix("stream ended:") }.map(String.init)
            }
            #expect(ended == "stream ended: INVALID_ARGUMENT \(Self.userEmpty) after 0 events")
            await watcher.stop()

            // Nothing changed: the key still holds the value put before the token.
            let value = try await etcd.cli.run("get", "etcd", "/a")
            #expect(value.stdout == "1\n", "\(value.stderr)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("serve --etcd started with tokens required serves, and refuses every etcd call without one, saying so in its log")
    func startedWithTokens() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        var runner = cli
        runner.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/store.db"
        #expect(try await runner.run("token", "create", "--role", "admin").status == 0)
        let server = try runner.launch(["serve", "--port", "0", "--log-level", "error", "--etcd", "127.0.0.1:0"], stdout: .discard)
        do {
            let port = try await server.waitForOutput(timeout: .seconds(60)) { output -> Int? in
                guard let range = output.stderr.range(of: #"etcd API over config etcd on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) else { return nil }
                return Int(output.stderr[range].split(separator: ":").last ?? "")
            }
            #expect(server.output.stderr.contains("tokens are required: etcd calls need a token from Auth.Authenticate, with a discfg token's id as user name and the token as password"), "\(server.output.stderr)")
            let put = try await ChildProcess.run(
                "etcdctl", ["--endpoints=127.0.0.1:\(port)", "put", "a", "1"],
                environment: ChildProcess.environment(["ETCDCTL_API": "3", "HOME": cli.directory.path]), timeout: .seconds(60)
            )
            #expect(put.termination != .exited(0))
            #expect(put.stderr.contains(Self.userEmpty), "\(put.stderr)")
        } catch {
            await server.kill()
            throw error
        }
        await server.stop()
    }

    @Test("compares, ranges, counts and deletes over ranges never reach keys written by REST or the CLI")
    func foreignKeys() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            #expect(try await etcd.ok("put", "seed", "s") == "OK\n")
            #expect(try await etcd.cli.run("set", "etcd", "/db/password", "hunter2").status == 0)
            #expect(try await etcd.cli.run("set", "etcd", "/b/x", "foreign").status == 0)
            let lines = try await Self.peer("foreign", etcd)
            #expect(lines.contains("value probes over [db, dc): False False False False False"))
            #expect(lines.contains("version probes over [db, dc): False False False"))
            #expect(lines.contains("range [a, e): ['c'] count 1"))
            #expect(lines.contains("count of everything: 2"))
            #expect(lines.contains("txn range [a, e): ['c']"))
            #expect(lines.contains("delete [a, e): 1 ['c']"))
            #expect(lines.contains("txn delete of everything: 1"))
            #expect(try await etcd.cli.run("get", "etcd", "/db/password").stdout == "hunter2\n")
            #expect(try await etcd.cli.run("get", "etcd", "/b/x").stdout == "foreign\n")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    /// The bound on serve's peak RSS through the budget attacks. Measured on Linux x86-64
    /// with a debug build: see the test's printed line; before answers were bounded the
    /// Txn of 128 whole ranges alone took it past 1 GiB.
    static let budgetPeakMiB = 400

    @Test("over 8 MiB of values a range ends within 4 MiB with more, the rest pages on, and a 1,280-byte Txn of 128 whole ranges is refused, with peak RSS bounded", .timeLimit(.minutes(4)))
    func answerBudget() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let lines = try await Self.peer("budget", etcd)
            #expect(lines.contains("range: kvs 15 more True count 32 bytes 3933983 first big/00") || lines.contains { $0.hasPrefix("range: kvs 15 more True count 32 bytes ") })
            #expect(lines.contains("range from big/14: 15 more True count 17"))
            #expect(lines.contains("keys-only range: 32 more False"))
            #expect(lines.contains("count-only range: 32"))
            #expect(lines.contains("range limit 4: 4 more True count 32"))
            #expect(lines.contains { $0.hasPrefix("range sorted by mod revision: RESOURCE_EXHAUSTED grpc: trying to send message larger than max") })
            #expect(lines.contains("range at revision 4: 3"))
            #expect(lines.contains("txn request bytes: 1280"))
            #expect(lines.contains { $0.hasPrefix("txn of 128 whole ranges: RESOURCE_EXHAUSTED grpc: trying to send message larger than max") })
            #expect(lines.contains("txn of 8 one-key ranges: OK 8"))
            let memory = try Self.memory(etcd)
            print("serve --etcd after the budget attacks: peak RSS \(memory.peak) MiB, now \(memory.now) MiB")
            #expect(memory.peak < Self.budgetPeakMiB)
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("a 4 MiB Txn of two million empty compares is refused before it is decoded, without growing serve's peak RSS", .timeLimit(.minutes(3)))
    func txnDecode() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            #expect(try await etcd.ok("put", "warm", "up") == "OK\n")
            let before = try Self.memory(etcd)
            let lines = try await Self.peer("txn-decode", etcd)
            #expect(lines.contains("txn of 2097144 empty compares: INVALID_ARGUMENT etcdserver: too many operations in txn request"))
            // A nested transaction's lists are bounded as the outer one's, before decoding.
            #expect(lines.contains { $0.hasPrefix("nested txn: INVALID_ARGUMENT etcdserver: too many operations in txn request") }, "\(lines)")
            let after = try Self.memory(etcd)
            print("serve --etcd peak RSS before the 4 MiB Txn \(before.peak) MiB, after \(after.peak) MiB")
            // The request's own bytes, held while it arrives, and no decoded compares.
            #expect(after.peak - before.peak < 64)
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("one stream asking for 1,000 watchers gets a quarter of the server's; another connection still gets one")
    func watcherCaps() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let lines = try await Self.peer("watchers", etcd)
            #expect(lines.contains("one stream asked for 1000: created 250"))
            #expect(lines.contains("refused 750: etcdserver: too many watchers on this connection (250 of the server's 1000); cancel some first"))
            #expect(lines.contains("another connection asked for 1: created 1"))
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("past --etcd-quota a put gets etcd's NOSPACE and changes nothing, Status reports the alarm, and a delete still passes")
    func quota() async throws {
        let etcd = try await EtcdPeer.start(.sqlite, ["--etcd-quota", "1MB"])
        do {
            let value = String(repeating: "v", count: 256 << 10)
            for index in 1...3 { #expect(try await etcd.ok("put", "k\(index)", stdin: value) == "OK\n") }
            let refused = try await etcd.etcdctl("put", "k4", stdin: value)
            #expect(refused.termination != .exited(0))
            #expect(refused.stderr.contains("etcdserver: mvcc: database space exceeded"), "\(refused.stderr)")
            #expect(try await etcd.ok("get", "k4") == "")
            let status = try await etcd.ok("endpoint", "status", "-w", "json")
            #expect(status.contains("alarm:NOSPACE"), "\(status)")
            #expect(try await etcd.ok("del", "k1") == "1\n")
            #expect(try await etcd.ok("put", "k4", stdin: value) == "OK\n")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("a new etcd config keeps its last 100000 changes, or --etcd-history; one kept forever is left so, and the log says how to bound it")
    func history() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        let info = try await etcd.cli.run("info", "etcd", "-f", "json")
        #expect(info.stdout.contains("\"100000\""), "\(info.stdout)")
        await etcd.stop()

        let other = try await EtcdPeer.start(.sqlite, ["--etcd-history", "30d"])
        let otherInfo = try await other.cli.run("info", "etcd", "-f", "json")
        #expect(otherInfo.stdout.contains("\"30d\""), "\(otherInfo.stdout)")
        await other.stop()

        var cli = try CLIRunner()
        defer { cli.cleanUp() }
        cli.environment["DISCFG_STORE"] = "sqlite://\(cli.directory.path)/store.db"
        #expect(try await cli.run("create", "etcd", "{\"history\": \"forever\"}").status == 0)
        let server = try cli.launch(["serve", "--port", "0", "--log-level", "error", "--etcd", "127.0.0.1:0"], stdout: .discard)
        let notice = try await server.waitForOutput(timeout: .seconds(60)) { output -> Bool? in
            output.stderr.contains("config etcd keeps forever of history where a new etcd config keeps 100000; 'discfg update etcd --history 100000' bounds it") ? true : nil
        }
        #expect(notice)
        await server.stop()
        let bad = try await cli.run("serve", "--etcd", "127.0.0.1:0", "--etcd-history", "soon")
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--etcd-history"), "\(bad.stderr)")
    }
}
