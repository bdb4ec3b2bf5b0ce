import Configuration
import DiscfgClient
import DiscfgConfiguration
import DiscfgCore
import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import Testing

/// The Swift client and the swift-configuration provider, unchanged, against `discfg agent`
/// (the real binary) copying a config from a SQLite file that this test changes.
@Suite("Clients through the agent")
struct AgentClientTests {
    /// A SQLite file with config `app`, and an agent over it on a free port.
    struct Fixture {
        let directory: URL
        let store: SQLiteStore
        let agent: ChildProcess
        let url: URL
        let config = try! ConfigName("app")

        static func start() async throws -> Fixture {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-agent-client-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("store.db").path
            let store = try SQLiteStore(path: path)
            let config = try ConfigName("app")
            _ = try await store.createConfig(config, settings: ConfigSettings())
            _ = try await store.set(try Key("/app/limit"), to: Data("10".utf8), in: config)
            _ = try await store.set(try Key("/app/db/host"), to: Data("db1".utf8), in: config)
            let agent = try ChildProcess.launch(
                ChildProcess.discfg.path,
                ["agent", "--store", "sqlite://" + path, "--config", "app", "--port", "0", "--interval", "1s", "--log-level", "error"],
                environment: ChildProcess.environment(["HOME": directory.path]), stdout: .discard
            )
            let port: Int
            do {
                port = try await agent.waitForOutput(timeout: .seconds(60)) { output in
                    guard let range = output.stderr.range(of: #"http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) else { return nil }
                    return Int(output.stderr[range].split(separator: ":").last ?? "")
                }
            } catch {
                await agent.kill()
                throw error
            }
            return Fixture(directory: directory, store: store, agent: agent, url: URL(string: "http://127.0.0.1:\(port)")!)
        }

        func stop() async {
            await agent.kill()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func withAgent(_ body: (Fixture) async throws -> Void) async throws {
        let fixture = try await Fixture.start()
        do {
            try await body(fixture)
        } catch {
            await fixture.stop()
            throw error
        }
        await fixture.stop()
    }

    @Test("the Swift client reads, lists and watches through the agent; a write is refused as read-only", .timeLimit(.minutes(2)))
    func swiftClient() async throws {
        try await Self.withAgent { fixture in
            let remote = try ConfigClient(url: fixture.url).store
            let item = try #require(try await remote.get(try Key("/app/limit"), in: fixture.config, atRevision: nil))
            #expect(item.value == Data("10".utf8))
            // The source's own revisions and versions, not the copy's.
            let source = try #require(try await fixture.store.get(try Key("/app/limit"), in: fixture.config, atRevision: nil))
            #expect(item.modRevision == source.modRevision && item.version == source.version)
            let listed = try await remote.list(in: fixture.config, ListQuery(prefix: .root, recursive: true)).items.map(\.key.path)
            #expect(listed == ["/app/db/host", "/app/limit"])

            let refused = await #expect(throws: DiscfgError.self) {
                try await remote.set(try Key("/app/limit"), to: Data("11".utf8), in: fixture.config, options: SetOptions())
            }
            #expect(refused?.code == .readOnly, "\(String(describing: refused))")
            #expect(try await fixture.store.get(try Key("/app/limit"), in: fixture.config, atRevision: nil)?.value == Data("10".utf8))

            // A watch through the agent sees a change made at the source within an interval or two.
            let watch = await remote.watch(fixture.config, scope: .prefix(try KeyPrefix("/app")), from: nil)
            let change = try await fixture.store.set(try Key("/app/limit"), to: Data("20".utf8), in: fixture.config)
            var iterator = watch.makeAsyncIterator()
            let event = try #require(try await iterator.next())
            #expect(event.revision == change.revision)
            #expect(event.item?.value == Data("20".utf8))
        }
    }

    @Test("the swift-configuration provider loads from the agent and follows a change made at the source", .timeLimit(.minutes(2)))
    func configurationProvider() async throws {
        try await Self.withAgent { fixture in
            let provider = try await DiscfgProvider(client: try ConfigClient(url: fixture.url), config: "app", prefix: "/app")
            let reader = ConfigReader(provider: provider)
            #expect(reader.int(forKey: "limit") == 10)
            #expect(reader.string(forKey: "db.host") == "db1")
            try await withRunning(provider) {
                try await reader.watchInt(forKey: "limit") { updates in
                    var values = updates.makeAsyncIterator()
                    #expect(try await values.next() == 10)
                    _ = try await fixture.store.set(try Key("/app/limit"), to: Data("30".utf8), in: fixture.config)
                    #expect(try await values.next() == 30)
                }
            }
        }
    }

    @Test("raw HTTP: ETag and If-None-Match give 304, ?raw gives the bytes, every answer carries Discfg-Staleness", .timeLimit(.minutes(2)))
    func conditionalAndRawReads() async throws {
        try await Self.withAgent { fixture in
            let port = fixture.url.port!
            let first = try await LoopbackHTTP.exchange(port: port, "GET /v1/app/keys/app/limit", body: Data())
            #expect(first.hasPrefix("HTTP/1.1 200"), "\(first)")
            let etag = try #require(Self.header("etag", in: first))
            #expect(Self.header("discfg-staleness", in: first).flatMap(Double.init) != nil, "\(first)")
            let again = try await LoopbackHTTP.exchange(port: port, "GET /v1/app/keys/app/limit", body: Data(), headers: ["If-None-Match: \(etag)"])
            #expect(again.hasPrefix("HTTP/1.1 304"), "\(again)")
            let raw = try await LoopbackHTTP.exchange(port: port, "GET /v1/app/keys/app/limit?raw", body: Data())
            #expect(raw.hasPrefix("HTTP/1.1 200") && raw.hasSuffix("\r\n\r\n10"), "\(raw)")
            let missing = try await LoopbackHTTP.exchange(port: port, "GET /v1/other/keys/k", body: Data())
            #expect(missing.hasPrefix("HTTP/1.1 404") && missing.contains("app"), "names the config it holds: \(missing)")
        }
    }

    /// A header's value in a raw HTTP/1.1 answer, by lower-case name.
    static func header(_ name: String, in answer: String) -> String? {
        let head = answer.components(separatedBy: "\r\n\r\n").first ?? ""
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}
