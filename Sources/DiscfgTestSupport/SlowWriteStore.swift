import DiscfgCore
import Foundation
import Synchronization

/// A store whose writes (`set`, `transact`) are slow, as a store over a network is: each
/// notes the request's deadline as it saw it (``Deadline/current``), then takes `delay`
/// before it reaches the store behind. Cancelled while it takes it, the write is
/// abandoned and never reaches the store, as a network call cut short: so a test can
/// show which deadline reached the store, and that a write once begun was not abandoned.
///
/// ```swift
/// let store = SlowWriteStore(MemoryStore(), delay: .milliseconds(600))
/// ```
public final class SlowWriteStore: ForwardingStore {
    /// One write as the store saw it.
    public struct Write: Sendable {
        /// The deadline it had; nil for none.
        public var deadline: Deadline?
        /// When it began.
        public var began: ContinuousClock.Instant
        /// How long it had left when it began; nil without a deadline.
        public var allowed: Duration? { deadline.map { $0.instant - began } }
    }

    public let base: any ConfigStore
    public var forwardee: any ConfigStore { base }
    /// How long each write takes before it reaches the store behind.
    public let delay: Duration
    private let writes = Mutex<[Write]>([])
    private let abandonedCount = Mutex(0)

    /// A store over `base` whose writes take `delay`.
    public init(_ base: any ConfigStore, delay: Duration = .zero) {
        self.base = base
        self.delay = delay
    }

    /// The writes begun so far, in order.
    public var begun: [Write] { writes.withLock { $0 } }
    /// How many writes were cancelled before they reached the store behind.
    public var abandoned: Int { abandonedCount.withLock { $0 } }

    /// Forgets the writes seen so far.
    public func reset() { writes.withLock { $0.removeAll() } }

    public func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        try await begin()
        return try await base.set(key, to: value, in: config, options: options)
    }

    public func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult {
        try await begin()
        return try await base.transact(transaction, in: config)
    }

    private func begin() async throws {
        writes.withLock { $0.append(Write(deadline: Deadline.current, began: .now)) }
        guard delay > .zero else { return }
        do {
            try await Task.sleep(for: delay)
        } catch {
            abandonedCount.withLock { $0 += 1 }
            throw error
        }
    }
}
