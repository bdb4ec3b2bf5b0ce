@testable import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import DiscfgWire
import Foundation
import Testing

/// A transaction's changes share one revision and reach a view one by one: until the
/// view has applied every one of them, it does not answer for the config (read your
/// writes, for every key of the transaction).
@Suite("serve: views and transactions")
struct ViewTransactionTests {
    /// A memory store whose watch hands out only the events the test releases.
    final class HeldWatchStore: ForwardingStore {
        let base = MemoryStore()
        var forwardee: any ConfigStore { base }
        let (released, release) = AsyncThrowingStream.makeStream(of: Event.self)

        func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error> { released }
    }

    private func value(_ views: ConfigViews, _ key: String) -> String? {
        guard case .found(_, let answer) = views.lookup(keyPath: key, configName: "app") else { return nil }
        let body = String(buffer: answer.body)
        return try? JSONDecoder.discfg().decode(Envelope.self, from: Data(body.utf8)).item?.value
    }

    @Test("a view that has applied part of a transaction this server committed does not answer; once it has all of it, it does")
    func partOfATransaction() async throws {
        let store = HeldWatchStore()
        let config = try ConfigName("app")
        _ = try await store.createConfig(config, settings: ConfigSettings())
        for key in ["/a", "/b"] { _ = try await store.set(try Key(key), to: Data("0".utf8), in: config, options: SetOptions()) }
        let views = ConfigViews(store: store)
        defer { views.close() }
        let metrics = InstrumentedStore(store, metrics: APIMetrics(), views: views)
        views.want(config)
        try await eventually("the view of app answers", interval: .milliseconds(2)) { value(views, "/b") != nil }
        #expect(value(views, "/b") == "0")

        let result = try await metrics.transact(Transaction(success: [.put(try Key("/a"), Data("1".utf8)), .put(try Key("/b"), Data("1".utf8))]), in: config)
        #expect(result.events.count == 2)
        #expect(value(views, "/a") == nil)
        store.release.yield(result.events[0])
        // However long it waits, the view holds /a at 1 and /b at 0: it must not answer.
        for _ in 0..<50 {
            #expect(value(views, "/a") == nil)
            #expect(value(views, "/b") == nil)
            try await Task.sleep(for: .milliseconds(2))
        }
        store.release.yield(result.events[1])
        try await eventually("the view answers again with the whole transaction", interval: .milliseconds(2)) { value(views, "/b") != nil }
        #expect(value(views, "/a") == "1")
        #expect(value(views, "/b") == "1")
    }
}
