import Foundation
import Synchronization

/// Where stores get the time, so tests can move it (TTL, retention) without sleeping.
///
/// Times are whole milliseconds: every store keeps them exactly, so an item read back
/// equals the item that was written.
public protocol WallClock: Sendable {
    /// The current time, truncated to the millisecond.
    func now() -> Date
}

/// The system's clock.
public struct SystemClock: WallClock {
    /// Creates the system clock.
    public init() {}

    public func now() -> Date { Date(milliseconds: Date().milliseconds) }
}

/// A clock that moves only when told to; for tests and simulations.
public final class ManualClock: WallClock {
    private let current: Mutex<Date>

    /// Creates a clock showing `start`.
    public init(_ start: Date = Date(milliseconds: 1_767_225_600_000)) {
        current = Mutex(Date(milliseconds: start.milliseconds))
    }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(seconds: Double) {
        current.withLock { $0 = Date(milliseconds: $0.milliseconds + Int64(seconds * 1000)) }
    }
}

extension Date {
    /// A date from whole milliseconds since 1970.
    public init(milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Whole milliseconds since 1970.
    public var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
