import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg serve --etcd` against clients that make it hold memory or descriptors for
/// them (`Tests/Peers/h2_hold.py`, with bounded load): answers nobody takes, messages
/// never finished, floods of tiny messages on closed windows, idle connections. The
/// server's resident memory stays under the ceiling docs/etcd.md documents, ordinary
/// clients are still served meanwhile, and what waits too long is let go.
@Suite("etcd API: clients that hold the server's memory and descriptors")
struct EtcdHoldTests {
    /// The peak resident memory (VmHWM) `serve --etcd` may reach under any of these
    /// clients: the ceiling of docs/etcd.md for a debug build. Its parts: about 70 MiB at rest
    /// with the 8 MiB of values these tests write, at most
    /// `EtcdServer.maxHeldBytes` (256 MiB) of requests and answers as the budgets count
    /// them (which overstate small messages), and answers being built. Before the
    /// budgets counted answers and overhead, 300 unread Ranges reached 2.4 GiB.
    static let memoryCeiling = 512 << 20

    /// Runs `h2_hold.py` against the server and returns what it printed last (JSON).
    static func hold(_ etcd: EtcdPeer, _ arguments: [String]) async throws -> [String: Any] {
        try await hold(port: etcd.etcdPort, pid: etcd.server.pid, home: etcd.cli.directory.path, arguments)
    }

    static func hold(port: Int, pid: Int32, home: String, _ arguments: [String]) async throws -> [String: Any] {
        let run = try await ChildProcess.run(
            "python3", [PeerScript.path("h2_hold.py"), String(port), "--pid", String(pid)] + arguments,
            environment: ChildProcess.environment(["HOME": home]), timeout: .seconds(400)
        )
        #expect(run.termination == .exited(0), "\(run.stdout)\(run.stderr)")
        let line = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let result = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        print("h2_hold.py \(arguments.joined(separator: " ")): \(line)")
        return result
    }

    static func mebibytes(_ value: Any?) -> Int { ((value as? Int) ?? 0) >> 20 }

    @Test("300 whole-keyspace Ranges over 8 MiB of values on two connections that grant no window: answers past a connection's budget are refused, RSS stays under the ceiling, an ordinary client is served", .timeLimit(.minutes(5)))
    func unreadRanges() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let result = try await Self.hold(etcd, ["zero-window", "--kind", "range", "--connections", "2", "--streams", "150", "--values", "32", "--hold", "3"])
            let peak = (result["rss_hwm"] as? Int) ?? Int.max
            #expect(peak < Self.memoryCeiling, "peak RSS \(Self.mebibytes(peak)) MiB")
            #expect(result["legit"] as? String == "OK", "\(result)")
            let ended = result["ended"] as? [String: Int] ?? [:]
            #expect((ended["status 8"] ?? 0) > 0, "answers past the budget are answered RESOURCE_EXHAUSTED: \(ended)")
            #expect(etcd.server.isRunning)
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("an answer left waiting on a closed window is reset with ENHANCE_YOUR_CALM after --write-timeout, and what it held goes back", .timeLimit(.minutes(3)))
    func windowWaitTimeout() async throws {
        let etcd = try await EtcdPeer.start(.sqlite, ["--write-timeout", "2"])
        do {
            let result = try await Self.hold(etcd, ["zero-window", "--kind", "range", "--connections", "1", "--streams", "3", "--values", "8", "--hold", "6"])
            let ended = result["ended"] as? [String: Int] ?? [:]
            #expect(ended == ["reset 11": 3], "each waiting answer's stream is reset: \(ended)")
            #expect(result["legit"] as? String == "OK", "\(result)")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("4.8 million tiny keep-alives and watch progress requests on streams whose window is closed: each message is charged its overhead, so the memory they hold stays within what their connections' budgets count", .timeLimit(.minutes(6)), arguments: ["keepalive", "progress"])
    func tinyMessages(kind: String) async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            let result = try await Self.hold(etcd, [
                "zero-window", "--kind", kind, "--connections", "8", "--streams", "1", "--messages", "600000", "--send-time", "120", "--hold", "2",
            ])
            let peak = (result["rss_hwm"] as? Int) ?? Int.max
            let before = (result["rss_before"] as? Int) ?? 0
            // Eight connections may hold 16 MiB each as the budgets count it. Counted at
            // 12 bytes a message (its bytes alone), they held about 70 each: 330 MiB.
            #expect(peak - before < 8 * (16 << 20), "grew \(Self.mebibytes(peak - before)) MiB")
            #expect(peak < Self.memoryCeiling, "peak RSS \(Self.mebibytes(peak)) MiB")
            #expect(result["legit"] as? String == "OK", "\(result)")
            #expect(etcd.server.isRunning)
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("4 MiB messages left unfinished on 17 connections: an ordinary Put is still served (fair share), and each unfinished message is ended after --idle-timeout, its bytes given back", .timeLimit(.minutes(5)))
    func unfinishedMessages() async throws {
        let etcd = try await EtcdPeer.start(.sqlite, ["--idle-timeout", "5"])
        do {
            let result = try await Self.hold(etcd, ["unfinished", "--connections", "17", "--streams", "4", "--hold", "12"])
            #expect(result["legit"] as? String == "OK", "\(result)")
            let ended = result["ended"] as? [String: Int] ?? [:]
            #expect(ended["status 8"] == 68, "every unfinished stream ended RESOURCE_EXHAUSTED: \(ended)")
            let messages = result["messages"] as? [String] ?? []
            #expect(messages.contains { $0.contains("not whole within 5 s") }, "\(messages)")
            #expect(try await etcd.ok("put", "after", "unfinished") == "OK\n")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("all at once: unread Ranges, unfinished Puts, 64 connections of 100 Watch streams and 1,000 idle connections; an ordinary Put and Range are served throughout (each connection's floor) and RSS stays under the ceiling", .timeLimit(.minutes(5)))
    func allAtOnce() async throws {
        let etcd = try await EtcdPeer.start(.sqlite, ["--idle-timeout", "30"])
        do {
            async let ranges = Self.hold(etcd, ["zero-window", "--kind", "range", "--connections", "16", "--streams", "32", "--values", "32", "--hold", "10"])
            try await Task.sleep(for: .seconds(2))
            async let unfinished = Self.hold(etcd, ["unfinished", "--connections", "17", "--streams", "4", "--hold", "2"])
            async let watches = Self.hold(etcd, ["zero-window", "--kind", "progress", "--connections", "64", "--streams", "100", "--messages", "1", "--hold", "4"])
            async let idle = Self.hold(etcd, ["idle", "--connections", "1000", "--hold", "8"])
            let results = try await [ranges, unfinished, watches, idle]
            for result in results.prefix(3) {
                #expect(result["legit"] as? String == "OK", "\(result)")
            }
            let peak = results.compactMap { $0["rss_hwm"] as? Int }.max() ?? Int.max
            #expect(peak < Self.memoryCeiling, "peak RSS \(Self.mebibytes(peak)) MiB")
            #expect(etcd.server.isRunning)
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("connections with no stream open are sent GOAWAY and closed after --idle-timeout, PINGs or not", .timeLimit(.minutes(3)), arguments: [false, true])
    func idleConnections(ping: Bool) async throws {
        let etcd = try await EtcdPeer.start(.sqlite, ["--idle-timeout", "2"])
        do {
            let result = try await Self.hold(etcd, ["idle", "--connections", "50", "--hold", "15"] + (ping ? ["--ping"] : []))
            #expect(result["taken"] as? Int == 50, "\(result)")
            #expect(result["goaway"] as? Int == 50, "\(result)")
            #expect(result["closed"] as? Int == 50, "\(result)")
            // A watch keeps its connection: a stream is open.
            #expect(try await etcd.ok("put", "still", "served") == "OK\n")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }

    @Test("under ulimit -n 512, 600 idle etcd connections leave REST /healthz answered and the CPU quiet: the two APIs share one descriptor budget", .timeLimit(.minutes(3)))
    func sharedDescriptors() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let server = try cli.launchShell(#"ulimit -n 512 && exec "$DISCFG" serve --port 0 --log-level error --etcd 127.0.0.1:0"#, stdout: .discard)
        do {
            let ports = try await server.waitForOutput(timeout: .seconds(60)) { output -> (Int, Int)? in
                guard let rest = output.stderr.range(of: #"http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                      let etcd = output.stderr.range(of: #"etcd API over config etcd on 127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                      let restPort = Int(output.stderr[rest].split(separator: ":").last ?? ""),
                      let etcdPort = Int(output.stderr[etcd].split(separator: ":").last ?? "")
                else { return nil }
                return (restPort, etcdPort)
            }
            let result = try await Self.hold(port: ports.1, pid: server.pid, home: cli.directory.path, [
                "idle", "--connections", "600", "--rest-port", String(ports.0), "--hold", "4",
            ])
            #expect((result["healthz"] as? String)?.hasPrefix("HTTP/1.1 200") == true, "\(result)")
            #expect(((result["taken"] as? Int) ?? 600) < 300, "the etcd API's share of 512 descriptors: \(result)")
            #expect(((result["cpu"] as? Double) ?? 2) < 0.5, "a core or more spent while idle connections wait: \(result)")
            #expect(server.isRunning)
        } catch {
            await server.kill()
            throw error
        }
        await server.stop()
    }
}
