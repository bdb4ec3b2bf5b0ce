import DiscfgCore

/// The behaviour every `ConfigStore` must have — items, conditions, listings, history,
/// TTLs, watches, import and export, page budgets, tokens, etcd leases, limits,
/// concurrency — as checks any store can run. A new store is done when it passes them all.
///
/// Each check makes fresh stores with the factory and throws a ``CheckFailure`` listing
/// every expectation that failed, as `File.swift:LINE: message` with the values it saw. The
/// library does not link a test framework: any runner that reports a thrown error runs it —
/// a Swift Testing `@Test`, an XCTest `func test…() async throws`, a plain program.
///
/// ```swift
/// import Testing
///
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
/// With XCTest the body is the same, in a `func testConformance() async throws`, with
/// `XCTAssertEqual(ran, suite.checks.count)`.
///
/// Or one check at a time (`suite.condition.versionZeroCreatesOnlyWhenAbsent()`), which is
/// how discfg's own tests run it against every store it has, one test per check and store.
public struct StoreConformance: Sendable {
    /// A store under test, and how to remove what it left behind.
    public struct Fixture: Sendable {
        public var store: any ConfigStore
        public var cleanup: @Sendable () async -> Void
        /// Who the store records as making every change, whatever the change was
        /// attributed to: a remote store's server records the caller it authenticated,
        /// never the client's claim. Nil for a store that records the attribution given.
        public var recordedPrincipal: Principal?
        /// Opens the store's data again, as a second server or a restart does (the file
        /// again, a second client of the table), for checks of what outlives an opening;
        /// nil for a store whose data lives only in it, which the checks then read again.
        public var reopen: (@Sendable () async throws -> any ConfigStore)?

        public init(
            store: any ConfigStore, recordedPrincipal: Principal? = nil, reopen: (@Sendable () async throws -> any ConfigStore)? = nil,
            cleanup: @escaping @Sendable () async -> Void = {}
        ) {
            self.store = store
            self.recordedPrincipal = recordedPrincipal
            self.reopen = reopen
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

        /// The store keeps etcd leases (`LeaseStore`).
        public static let leases = Capabilities(rawValue: 1 << 2)

        /// The store runs nested transactions (``DiscfgCore/TransactionOperation/nested(_:)``)
        /// as one atomic change. (A remote store cannot: the REST API's transactions do not
        /// nest, and it refuses them whole.)
        public static let nestedTransactions = Capabilities(rawValue: 1 << 3)

        /// The store commits a change of any number of keys as one change (an import, a
        /// prefix delete), not only as many as one transaction of its database holds.
        public static let largeChanges = Capabilities(rawValue: 1 << 4)

        public static let all: Capabilities = [.tokens, .exportPagesReadHistory, .leases, .nestedTransactions, .largeChanges]
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

    /// Runs `body` with a fresh store and its clock, then removes the store. Every check
    /// runs in here: the expectations `body` makes are recorded, and when any failed, the
    /// check throws them all as one ``CheckFailure``.
    /// - Parameters:
    ///   - fileID: the check's file, named for an error `body` throws after a failure.
    ///   - line: the check's line, likewise.
    @discardableResult
    package func withStore<T>(
        fileID: String = #fileID, line: Int = #line, _ body: (_ store: any ConfigStore, _ clock: ManualClock) async throws -> T
    ) async throws -> T {
        try await withFixture(fileID: fileID, line: line) { fixture, clock in try await body(fixture.store, clock) }
    }

    /// ``withStore(fileID:line:_:)`` for checks that need the fixture whole.
    @discardableResult
    package func withFixture<T>(
        fileID: String = #fileID, line: Int = #line, _ body: (_ fixture: Fixture, _ clock: ManualClock) async throws -> T
    ) async throws -> T {
        let clock = ManualClock()
        let fixture = try await makeStore(clock)
        let log = ExpectationLog()
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await ExpectationLog.$current.withValue(log) { try await body(fixture, clock) })
        } catch {
            outcome = .failure(error)
        }
        await fixture.cleanup()
        var failures = log.recorded
        switch outcome {
        case .success(let result) where failures.isEmpty:
            return result
        case .success:
            break
        case .failure(let failure as ExpectationFailure):
            failures.append(failure)
        case .failure(let error) where failures.isEmpty:
            // The store threw and nothing failed before: its own error says it best.
            throw error
        case .failure(let error):
            failures.append(ExpectationFailure("then the check threw \(type(of: error)): \(error)", fileID: fileID, line: line))
        }
        throw CheckFailure(store: name, expectations: failures)
    }

    /// Runs every check but those named in `skipping`, one after another. Returns how many
    /// checks ran.
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
