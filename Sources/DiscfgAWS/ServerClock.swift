import Foundation
import Synchronization

/// What an endpoint's clock said, next to ours, when its last answer arrived.
///
/// SigV4 signatures carry the signing time, and AWS refuses one more than five minutes
/// from its own clock (`InvalidSignatureException`, "Signature expired"), so a machine
/// whose clock drifted cannot use AWS at all; the `Date` header of any answer, even a
/// refusal, tells by how much.
public struct ServerClockReading: Sendable, Hashable {
    /// The endpoint's time, from its `Date` header (whole seconds).
    public var serverDate: Date
    /// Our time when the answer arrived.
    public var localDate: Date

    /// Creates a reading.
    public init(serverDate: Date, localDate: Date) {
        self.serverDate = serverDate
        self.localDate = localDate
    }

    /// Seconds our clock is ahead of the endpoint's (negative: behind). The header has
    /// whole seconds, so a difference under one second means nothing.
    public var skew: TimeInterval { localDate.timeIntervalSince(serverDate) }

    /// How far a SigV4 signing time may be from AWS's clock.
    public static let signatureWindow: TimeInterval = 300
}

/// Keeps the ``ServerClockReading`` of the latest answer that carried a `Date` header.
public final class ServerClock: Sendable {
    private let latest = Mutex<ServerClockReading?>(nil)

    /// An empty recorder.
    public init() {}

    /// The reading of the latest answer with a `Date` header, or nil before any.
    public var reading: ServerClockReading? { latest.withLock { $0 } }

    /// Records the `Date` header `value` of an answer that arrived at `localDate`; an
    /// absent or unreadable header changes nothing.
    public func record(dateHeader value: String?, at localDate: Date) {
        guard let value, let serverDate = AWSTimestamp.parseHTTPDate(value) else { return }
        latest.withLock { $0 = ServerClockReading(serverDate: serverDate, localDate: localDate) }
    }
}
