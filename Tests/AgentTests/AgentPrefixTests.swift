import DiscfgAgent
import DiscfgConformance
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg agent --prefix`: configs under a prefix come and go with the store; and a whole
/// reload (history compacted) reaches watchers as events.
@Suite("Agent: configs under a prefix, reloads as events")
struct AgentPrefixTests {
    static func name(_ text: String) -> ConfigName { try! ConfigName(text) }

    @Test("configs under the prefix are listed at start and each interval; a deleted one is dropped", .timeLimit(.minutes(1)))
    func comesAndGoes() async throws {
        let store = MemoryStore()
        for config in ["app-a", "other"] {
            _ = try await store.createConfig(Self.name(config), settings: ConfigSettings())
            _ = try await store.set(try Key("/k"), to: Data(config.utf8), in: Self.name(config))
        }
        let agent = Agent(source: StoreSource(store, description: "memory:"), configs: [], prefixes: ["app-"], interval: .milliseconds(50))
        try await agent.load()
        #expect(agent.replica.configs == [Self.name("app-a")])
        #expect(try await agent.replica.get(try Key("/k"), in: Self.name("app-a"))?.value == Data("app-a".utf8))
        try await expectError(.configNotFound, mentioning: ["holds \"app-a\""]) { _ = try await agent.replica.get(try Key("/k"), in: Self.name("other")) }

        let running = Task { await agent.run() }
        defer { running.cancel() }
        _ = try await store.createConfig(Self.name("app-b"), settings: ConfigSettings())
        _ = try await store.set(try Key("/k"), to: Data("b".utf8), in: Self.name("app-b"))
        try await eventually("app-b is served", timeout: .seconds(5)) {
            (try? await agent.replica.get(try Key("/k"), in: Self.name("app-b")))??.value == Data("b".utf8)
        }
        let watch = await agent.replica.watch(Self.name("app-a"), scope: .prefix(.root), from: nil)
        try await store.deleteConfig(Self.name("app-a"))
        try await eventually("app-a is dropped", timeout: .seconds(5)) { agent.replica.configs == [Self.name("app-b")] }
        try await expectError(.configNotFound) { _ = try await agent.replica.get(try Key("/k"), in: Self.name("app-a")) }
        await #expect(throws: DiscfgError.self, "its watchers end") { for try await _ in watch {} }
        #expect(agent.metricsText().contains("discfg_agent_listing_errors_total 0"))
        running.cancel()
        await running.value
    }

    @Test("prefixes are checked like config names")
    func checked() throws {
        #expect(try Agent.checkPrefix("app-") == "app-")
        for bad in ["", "a/b", "a b", "x\u{0}", String(repeating: "a", count: 201)] {
            #expect(throws: DiscfgError.self, "\(bad.debugDescription)") { try Agent.checkPrefix(bad) }
        }
    }

    @Test("a source that cannot list refuses --prefix at load")
    func notListable() async throws {
        struct Unlisted: AgentSource {
            let description = "s3://bucket"
            func revision(of config: ConfigName) async throws -> Revision { .zero }
            func changes(in config: ConfigName, after revision: Revision) async throws -> (events: [Event], through: Revision)? { nil }
            func load(_ config: ConfigName) async throws -> PublishedSnapshot { try PublishedSnapshot(config: config, revision: .zero, items: []) }
        }
        let agent = Agent(source: Unlisted(), configs: [], prefixes: ["a"], interval: .seconds(1))
        try await expectError(.invalidArgument, mentioning: ["cannot list its configs", "--config"]) { try await agent.load() }
    }

    @Test("a reload after compaction reaches a watcher as the keys that differ", .timeLimit(.minutes(1)))
    func reloadAsEvents() async throws {
        let store = MemoryStore()
        let app = Self.name("app")
        _ = try await store.createConfig(app, settings: ConfigSettings())
        _ = try await store.set(try Key("/a"), to: Data("1".utf8), in: app)
        _ = try await store.set(try Key("/b"), to: Data("1".utf8), in: app)
        let replica = ReplicaStore(source: "memory:", configs: [app])
        let follower = ConfigFollower(config: app, source: StoreSource(store, description: "memory:"), replica: replica)
        #expect(await follower.refresh() == .loaded(2))
        let watch = await replica.watch(app, scope: .prefix(.root), from: 3)
        _ = try await store.set(try Key("/a"), to: Data("2".utf8), in: app)
        _ = try await store.delete(try Key("/b"), in: app, conditions: [])
        _ = try await store.set(try Key("/c"), to: Data("3".utf8), in: app)
        _ = try await store.compact(app, through: 5)
        #expect(await follower.refresh() == .loaded(5))
        var events = watch.makeAsyncIterator()
        var seen: [String] = []
        for _ in 0..<3 {
            let event = try #require(try await events.next())
            seen.append("\(event.kind.rawValue) \(event.key.path)@\(event.revision)")
        }
        #expect(seen == ["put /a@3", "delete /b@5", "put /c@5"])
        let batch = try await replica.events(in: app, scope: .prefix(.root), from: 3, limit: 10)
        #expect(batch.events.count == 3)
        #expect(try await replica.configInfo(app).revision == 5)
    }
}
