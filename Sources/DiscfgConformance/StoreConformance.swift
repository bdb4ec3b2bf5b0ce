import DiscfgCore
import Testing

/// The behaviour every `ConfigStore` must have — items, conditions, listings, history,
/// TTLs, watches, import and export, page budgets, tokens, limits, concurrency — as checks
/// any store can run. A new store is done when it passes them all.
///
/// Run from a Swift Testing test: each check makes fresh stores with the factory and
/// records failures with `#expect` in the calling test.
///
/// ```swift
/// @Test func conformance() async throws {
///     let suite = StoreConformance(name: "mine", capabilities: [.tokens]) { clock in
///         let store = try MyStore(clock: clock)
///         return StoreConformance.Fixture(store: store) { await store.close() }
///     }
///     let ran = try await suite.runAll()
///     #expect(ran == suite.checks.count)
/// }
/// ```
///
/// Or one check at a time (`suite.conditions.versionZeroCreatesOnlyWhenAbsent()`), which is
/// how discfg's own tests run it against every store it has, one test per check and store.
public struct StoreConformance: Sendable {
    /// A store under test, and how to remove what it left behind.
    public struct Fixture: Sendable {
        public var store: any ConfigStore
        public var cleanup: @Sendable () async -> Void

        public init(store: any ConfigStore, cleanup: @escaping @Sendable () async -> Void = {}) {
            self.store = store
            self.cleanup = cleanup
        }
    }

    /// One check, by name.
    public struct Check: Sendable, CustomStringConvertible {
        /// `Checks.method(argument: value)`.
        public var name: String
        public var run: @Sendable () async throws -> Void

        public init(name: String, run: @escaping @Sendable () async throws -> Void) {
            self.name = name
            self.run = run
        }

        public var description: String { name }
    }

    /// What a store may do beyond ``ConfigStore``; checks of a capability the store does
    /// not declare are left out of ``checks``.
    public struct Capabilities: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The store keeps bearer tokens (`TokenStore`).
        public static let tokens = Capabilities(rawValue: 1 << 0)
        /// Each page of an export is read from the store when it is asked for, so history
        /// compacted while an export is read fails the export with `compacted`. (A store
        /// that has the whole export in hand before the first page, like the remote store,
        /// cannot.)
        public static let exportPagesReadHistory = Capabilities(rawValue: 1 << 1)

        public static let all: Capabilities = [.tokens, .exportPagesReadHistory]
    }

    /// The store's name in failure messages.
    public let name: String
    /// What the store declares it can do beyond ``ConfigStore``.
    public let capabilities: Capabilities
    private let makeStore: @Sendable (ManualClock) async throws -> Fixture

    /// - Parameters:
    ///   - name: what the store is called in messages.
    ///   - capabilities: what the store does beyond ``ConfigStore``.
    ///   - makeStore: a fresh, empty store that reads its time from the clock it is given.
    ///     Checks move that clock to test TTLs and time-based history retention.
    public init(name: String, capabilities: Capabilities = [], makeStore: @escaping @Sendable (ManualClock) async throws -> Fixture) {
        self.name = name
        self.capabilities = capabilities
        self.makeStore = makeStore
    }

    /// Runs `body` with a fresh store and its clock, then removes the store.
    package func withStore<T>(_ body: (_ store: any ConfigStore, _ clock: ManualClock) async throws -> T) async throws -> T {
        let clock = ManualClock()
        let fixture = try await makeStore(clock)
        do {
            let result = try await body(fixture.store, clock)
            await fixture.cleanup()
            return result
        } catch {
            await fixture.cleanup()
            throw error
        }
    }

    /// Runs every check but those named in `skipping`, one after another; failed
    /// expectations are recorded in the calling test. Returns how many checks ran.
    /// - Throws: a ``Failures`` naming every check that threw, after running them all.
    @discardableResult
    public func runAll(skipping: Set<String> = []) async throws -> Int {
        var ran = 0
        var failed: [String] = []
        for check in checks where !skipping.contains(check.name) {
            ran += 1
            do {
                try await check.run()
            } catch {
                failed.append("\(check.name): \(error)")
            }
        }
        if !failed.isEmpty { throw Failures(store: name, checks: failed) }
        return ran
    }

    /// The checks that threw, by name, with what they threw.
    public struct Failures: Error, CustomStringConvertible {
        public var store: String
        public var checks: [String]
        public var description: String { "\(checks.count) check(s) failed on \(store):\n" + checks.joined(separator: "\n") }
    }
}
