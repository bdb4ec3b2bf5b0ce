import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg agent --cache-dir` killed (SIGKILL) at random moments while the store changes
/// fast: the copy on disk is always one whole state the store went through, never a
/// mix or a torn file, and an agent started again with the store unreachable serves
/// exactly that state.
@Suite("CLI: agent killed at any moment")
struct AgentCrashTests {
    static let keys = 40

    /// Transaction `n` sets every key to a value naming `n`, longer each time (up to about
    /// 20 KB, then again from 512 bytes): a state is whole when all its keys name the same `n`.
    static func value(_ n: Int) -> String {
        "\(n):" + String(repeating: Character(UnicodeScalar(UInt8(97 + n % 26))), count: 512 + (n % 200) * 97)
    }

    static func transaction(_ n: Int) -> Data {
        let puts = (0..<keys).map { #"{"op":"put","key":"/k\#($0)","value":"\#(value(n))"}"# }
        return Data(#"{"success":[\#(puts.joined(separator: ","))]}"#.utf8)
    }

    /// The transaction number a snapshot's items all name, or a failure saying how it is not whole.
    static func wholeState(_ snapshot: PublishedSnapshot) throws -> Int {
        let values = Set(snapshot.items.map { String(decoding: $0.value, as: UTF8.self) })
        guard snapshot.items.count == keys, values.count == 1, let only = values.first,
              let n = Int(only.prefix { $0 != ":" }), only == value(n)
        else {
            throw DiscfgError(.internal, "not a whole state: \(snapshot.items.count) items, \(values.count) distinct values at revision \(snapshot.revision)")
        }
        return n
    }

    @Test("SIGKILL during load and follow: the cache holds the old or the new whole state, served as is with the store gone", .timeLimit(.minutes(4)))
    func killAtAnyMoment() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "demo").status == 0)
        let file = cli.directory.appendingPathComponent("txn.json")
        try Self.transaction(0).write(to: file)
        #expect(try await cli.run("txn", "demo", "--file", file.path).status == 0)

        // The writer: one transaction after another, each value longer than the last.
        let writer = Task {
            var n = 1
            while !Task.isCancelled {
                let path = cli.directory.appendingPathComponent("txn-\(n % 2).json")
                try Self.transaction(n).write(to: path)
                // A run cut short by the cancellation at the end ends the writer.
                guard let result = try? await cli.run("txn", "demo", "--file", path.path), !Task.isCancelled else { break }
                guard result.status == 0 else { throw DiscfgError(.internal, "txn \(n): \(result.stderr)") }
                n += 1
            }
            return n
        }
        defer { writer.cancel() }

        let cacheDirectory = cli.directory.appendingPathComponent("cache")
        let cacheFile = cacheDirectory.appendingPathComponent("demo.json")
        var offline = cli
        offline.environment["DISCFG_STORE"] = "http://localhost:9"
        var generator = SystemRandomNumberGenerator()
        var lastSeen = -1
        var states: Set<Int> = []
        for round in 0..<30 {
            let agent = try cli.launch(
                ["agent", "--config", "demo", "--port", "0", "--interval", "1s", "--log-level", "error", "--cache-dir", cacheDirectory.path], stdout: .discard
            )
            // From 0 to 2.5 s: before, during or after the load's cache write, or a follow's.
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...2500, using: &generator)))
            _ = await agent.kill(SIGKILL)

            guard let data = FileManager.default.contents(atPath: cacheFile.path) else {
                #expect(lastSeen == -1, "round \(round): the cache file is gone after holding state \(lastSeen)")
                continue
            }
            let snapshot: PublishedSnapshot
            do { snapshot = try PublishedSnapshot(decoding: data) } catch {
                Issue.record("round \(round): the cache file (\(data.count) bytes) fails its check: \(error)")
                return
            }
            let n = try Self.wholeState(snapshot)
            #expect(n >= lastSeen, "round \(round): the cache went back from state \(lastSeen) to \(n)")
            lastSeen = n
            states.insert(n)

            // Started again with the store gone, it serves that state exactly. (It waits out
            // the load's deadline first, ~10 s: checked on every sixth round only.)
            guard round % 6 == 5 else { continue }
            let (again, port) = try await offline.agent(["--cache-dir", cacheDirectory.path])
            var remote = cli
            remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
            let exported = try await remote.run("export", "demo", "-f", "json")
            _ = await again.kill(SIGKILL)
            #expect(exported.status == 0, "round \(round): \(exported.stderr)")
            let served = try JSONDecoder().decode(Exported.self, from: exported.stdoutData)
            #expect(served.revision == snapshot.revision.rawValue, "round \(round)")
            #expect(served.items.map(\.key) == snapshot.items.map(\.key.description), "round \(round)")
            #expect(Set(served.items.map(\.value)) == [Self.value(n)], "round \(round): served values are not state \(n)")
        }
        writer.cancel()
        let written = try await writer.value
        #expect(states.count > 3, "the rounds saw too few states (\(states.sorted())) of \(written) written to prove much")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cacheDirectory.path).filter { $0 != "demo.json" }
        #expect(leftovers.count <= 1, "files a killed write left behind pile up: \(leftovers)")
    }

    struct Exported: Decodable {
        struct Item: Decodable {
            let key: String
            let value: String
        }
        let revision: UInt64
        let items: [Item]
    }
}
