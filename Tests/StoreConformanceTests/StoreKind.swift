import DiscfgCore
import DiscfgSQLite
import Foundation

/// The stores the conformance suite runs against. A new store joins the suite by adding
/// a case here; every test then runs against it too.
enum StoreKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case memory
    case sqlite

    var description: String { rawValue }

    /// A fresh, empty store that reads its time from `clock`.
    func make(clock: ManualClock) async throws -> StoreFixture {
        switch self {
        case .memory:
            return StoreFixture(store: MemoryStore(clock: clock), clock: clock, cleanup: {})
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("discfg-conformance-\(UUID().uuidString)", isDirectory: true)
            let path = directory.appendingPathComponent("store.db").path
            let store = try SQLiteStore(path: path, clock: clock)
            return StoreFixture(store: store, clock: clock, cleanup: {
                try? FileManager.default.removeItem(at: directory)
            })
        }
    }

    /// Runs `body` with a fresh store and a manual clock, then removes the store.
    func withStore<T>(
        _ body: (_ store: any ConfigStore, _ clock: ManualClock) async throws -> T
    ) async throws -> T {
        let fixture = try await make(clock: ManualClock())
        defer { fixture.cleanup() }
        return try await body(fixture.store, fixture.clock)
    }
}

/// A store under test, the clock it reads, and how to remove what it left behind.
struct StoreFixture: Sendable {
    let store: any ConfigStore
    let clock: ManualClock
    let cleanup: @Sendable () -> Void
}
