import DiscfgCore
import Foundation
import Testing

@Suite("Concurrent compare-and-swap")
struct ConcurrencyTests {
    static let writers = 8
    static let incrementsPerWriter = 25

    @Test(arguments: StoreKind.allCases)
    func concurrentIncrementsLoseNoUpdate(kind: StoreKind) async throws {
        try await kind.withStore { store, _ in
            let config = try await store.makeConfig()
            let key = try Key("/counter")
            _ = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<Self.writers {
                    group.addTask { try await Self.increment(key, in: config, of: store, times: Self.incrementsPerWriter) }
                }
                return try await group.reduce(0, +)
            }
            let total = Self.writers * Self.incrementsPerWriter
            let item = try #require(try await store.get(key, in: config))
            #expect(item.text == String(total))
            #expect(item.version == UInt64(total))
            #expect(try await store.revision(of: config) == Revision(UInt64(total)))
            let history = try await store.fullHistory(of: key, in: config)
            #expect(history.map(\.item?.text) == (1...total).reversed().map { Optional(String($0)) })
        }
    }

    /// Adds one to the counter `times` times with compare-and-swap; returns how many
    /// attempts lost a race and were retried.
    static func increment(_ key: Key, in config: ConfigName, of store: any ConfigStore, times: Int) async throws -> Int {
        var conflicts = 0
        for _ in 0..<times {
            while true {
                let current = try await store.get(key, in: config)
                let next = (current?.text.flatMap { Int($0) } ?? 0) + 1
                let guardVersion = Condition.version(current?.version ?? 0)
                // Let the other writers run between the read and the write, so that they race
                // even on a store whose calls never suspend.
                await Task.yield()
                do {
                    _ = try await store.set(key, to: Data(String(next).utf8), in: config, options: SetOptions(conditions: [guardVersion]))
                    break
                } catch let error as DiscfgError where error.code == .conditionFailed {
                    conflicts += 1
                    await Task.yield()
                }
            }
        }
        return conflicts
    }
}
