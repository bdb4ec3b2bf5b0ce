import DiscfgCore
import Foundation

public struct ConcurrencyChecks: Sendable {
    let conformance: StoreConformance

    static let writers = 8
    static let incrementsPerWriter = 25

    public func concurrentIncrementsLoseNoUpdate() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let key = try Key("/counter")
            _ = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<Self.writers {
                    group.addTask { try await CompareAndSwapCounter.increment(key, in: config, of: store, times: Self.incrementsPerWriter) }
                }
                return try await group.reduce(0, +)
            }
            let total = Self.writers * Self.incrementsPerWriter
            let item = try await require(store.get(key, in: config))
            expectEqual(item.text, String(total))
            expectEqual(item.version, UInt64(total))
            try await expectEqual(store.revision(of: config), Revision(UInt64(total)))
            let history = try await store.fullHistory(of: key, in: config)
            expectEqual(history.map(\.item?.text), (1...total).reversed().map { Optional(String($0)) })
        }
    }
}

extension StoreConformance {
    /// The checks of concurrent compare-and-swap.
    public var concurrency: ConcurrencyChecks { ConcurrencyChecks(conformance: self) }
}
