import AsyncHTTPClient
import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOCore
import Synchronization
import Testing

/// Faults injected into a running `discfg serve`: nothing acknowledged is lost, and no
/// caller is told a change failed that was made, or made that failed.
@Suite("serve: faults lose nothing acknowledged", .serialized)
struct FaultTests {
    /// Writers PUTting distinct keys through one server until told to stop; each records
    /// the keys the server acknowledged (2xx) and the statuses it answered.
    final class Load: Sendable {
        let acknowledged = Mutex<[String: String]>([:])
        /// Keys whose PUT was answered with an error: they must not be there.
        let refused = Mutex<Set<String>>([])
        let statuses = Mutex<[Int: Int]>([:])
        let transportErrors = Mutex(0)
        let stopped = Mutex(false)

        var isStopped: Bool { stopped.withLock { $0 } }
        func stop() { stopped.withLock { $0 = true } }
        func count(_ status: Int) -> Int { statuses.withLock { $0[status, default: 0] } }
        var total: Int { statuses.withLock { $0.values.reduce(0, +) } }

        func run(port: Int, writers: Int, value: @escaping @Sendable (Int, Int) -> String, until stop: @escaping @Sendable () -> Bool) async {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        var index = 0
                        while !stop() {
                            let key = "w\(writer)/k\(index)"
                            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/faults/keys/\(key)")
                            request.method = .PUT
                            let text = value(writer, index)
                            request.body = .bytes(ByteBuffer(string: text))
                            index += 1
                            do {
                                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                                _ = try await response.body.collect(upTo: 1 << 20)
                                let status = Int(response.status.code)
                                self.statuses.withLock { $0[status, default: 0] += 1 }
                                if (200..<300).contains(status) { self.acknowledged.withLock { $0["/" + key] = text } }
                                if status >= 400 { self.refused.withLock { _ = $0.insert("/" + key) } }
                            } catch {
                                self.transportErrors.withLock { $0 += 1 }
                                try? await Task.sleep(for: .milliseconds(20))
                            }
                        }
                    }
                }
            }
        }
    }

    /// Starts `discfg serve` over `store` and returns it with its port.
    static func serve(_ cli: CLIRunner, store: String) async throws -> (ChildProcess, Int) {
        var runner = cli
        runner.environment["DISCFG_STORE"] = store
        return try await runner.serve()
    }

    /// Every acknowledged key, read back through a fresh process, holds its value, and no
    /// refused key is there.
    static func expectAllPresent(_ acknowledged: [String: String], refused: Set<String> = [], cli: CLIRunner, store: String) async throws {
        var runner = cli
        runner.environment["DISCFG_STORE"] = store
        let exported = try await runner.run("export", "faults", "--to", "json")
        #expect(exported.status == 0, "\(exported.stderr)")
        let document = try JSONSerialization.jsonObject(with: Data(exported.stdout.utf8)) as? [String: Any]
        let items = (document?["items"] as? [[String: Any]]) ?? []
        let stored = Dictionary(items.compactMap { item in (item["key"] as? String).map { ($0, item["value"] as? String ?? "") } }, uniquingKeysWith: { first, _ in first })
        let missing = acknowledged.filter { stored[$0.key] != $0.value }
        #expect(missing.isEmpty, "\(missing.count) of \(acknowledged.count) acknowledged values are missing or wrong, e.g. \(missing.first.map { "\($0.key)" } ?? "")")
        let madeAnyway = refused.filter { stored[$0] != nil }
        #expect(madeAnyway.isEmpty, "\(madeAnyway.count) changes were reported failed but are stored, e.g. \(madeAnyway.first ?? "")")
        #expect(try await runner.run("set", "faults", "after", "fault").status == 0, "the store takes writes again")
    }

    @Test("SIGKILL during concurrent PUTs: every acknowledged value is there after restart", .timeLimit(.minutes(2)))
    func killedServer() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let store = "sqlite://\(cli.directory.path)/kill.db"
        var runner = cli
        runner.environment["DISCFG_STORE"] = store
        try await runner.run("create", "faults")
        let (server, port) = try await Self.serve(cli, store: store)
        let load = Load()
        try await withServer(server) { server in
            async let writing: Void = load.run(port: port, writers: 8, value: { "v\($0)-\($1)" }, until: { load.isStopped })
            // Whatever happens below, the writers stop before the scope ends.
            defer { load.stop() }
            // Kill it mid-stream, once enough writes were acknowledged to prove something.
            try await eventually("40 writes are acknowledged", timeout: .seconds(60)) { load.acknowledged.withLock({ $0.count }) > 40 }
            await server.kill(SIGKILL)
            // The writers go on against the dead server for a moment (a refused connection
            // is retried by the client until the request's deadline: no failure to wait for).
            try await Task.sleep(for: .milliseconds(300))
            load.stop()
            await writing
        }
        let acknowledged = load.acknowledged.withLock { $0 }
        print("fault: SIGKILL — \(acknowledged.count) acknowledged, statuses \(load.statuses.withLock { $0 }), \(load.transportErrors.withLock { $0 }) transport errors")
        #expect(acknowledged.count > 20, "too few writes before the kill to prove anything: \(acknowledged.count)")
        #expect(load.statuses.withLock { $0.keys.allSatisfy { $0 < 500 } }, "\(load.statuses.withLock { $0 })")
        try await Self.expectAllPresent(acknowledged, cli: cli, store: store)
    }

    @Test("the disk fills up under concurrent PUTs: callers hear the truth, nothing acknowledged is lost", .timeLimit(.minutes(2)))
    func diskFull() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let mount = cli.directory.appendingPathComponent("small", isDirectory: true)
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        // A 3 MiB file system of its own: the machine runs the tests as root.
        try await Self.withSmallFileSystem(at: mount) {
            let store = "sqlite://\(mount.path)/full.db"
            var runner = cli
            runner.environment["DISCFG_STORE"] = store
            try await runner.run("create", "faults")
            let (server, port) = try await Self.serve(cli, store: store)
            try await withServer(server) { server in
                let load = Load()
                // 32 KiB values fill 3 MiB within a hundred writes; go on until dozens were refused.
                await load.run(port: port, writers: 6, value: { String(repeating: "\($0)", count: 32 * 1024 - 8) + String(format: "%08d", $1) }, until: {
                    load.count(503) > 60 || load.total > 2_000
                })
                let statuses = load.statuses.withLock { $0 }
                #expect(statuses.keys.allSatisfy { $0 != 500 }, "a full disk is not an internal error: \(statuses)")
                #expect(statuses[503, default: 0] > 0, "the disk never filled: \(statuses)")
                #expect(statuses.keys.allSatisfy { (200..<300).contains($0) || $0 == 503 }, "\(statuses)")
                #expect(server.isRunning, "the server died when the disk filled")
                await server.kill(SIGTERM)
                // Make room, then read back everything that was acknowledged.
                let acknowledged = load.acknowledged.withLock { $0 }
                print("fault: disk full — \(acknowledged.count) acknowledged, statuses \(statuses)")
                #expect(acknowledged.count > 10, "\(acknowledged.count) acknowledged")
                _ = try await ChildProcess.run("/bin/mount", ["-o", "remount,size=64m", mount.path], environment: ChildProcess.environment())
                try await Self.expectAllPresent(acknowledged, refused: load.refused.withLock { $0 }, cli: cli, store: store)
            }
        }
    }

    /// Runs `body` with a 3 MiB tmpfs mounted at `mount`, and unmounts it afterwards.
    static func withSmallFileSystem(at mount: URL, _ body: () async throws -> Void) async throws {
        let mounted = try await ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mount.path], environment: ChildProcess.environment())
        try #require(mounted.status == 0, "cannot mount a small tmpfs (the tests run as root on this machine): \(mounted.stderr)")
        do {
            try await body()
        } catch {
            _ = try? await ChildProcess.run("/bin/umount", ["-l", mount.path], environment: ChildProcess.environment())
            throw error
        }
        _ = try await ChildProcess.run("/bin/umount", ["-l", mount.path], environment: ChildProcess.environment())
    }
}
