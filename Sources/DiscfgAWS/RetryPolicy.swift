import Foundation

/// How many times discfg tries a failing call again and how long it waits in between: the
/// one retry policy for AWS calls, webhook and EventBridge deliveries, and the client's
/// watch reconnects.
///
/// Backoff uses "full jitter": the wait before retry *n* is uniform in
/// `0 ... min(maxDelay, baseDelay · 2ⁿ)`, which spreads competing clients apart better than
/// fixed or equal-jitter backoff when a table is throttled.
public struct RetryPolicy: Sendable {
    /// Total attempts including the first (1 disables retries).
    public var maxAttempts: Int
    /// The scale of the first backoff window.
    public var baseDelay: Duration
    /// The largest backoff window.
    public var maxDelay: Duration
    /// Attempts, including the first, for an endpoint that refuses the connection or
    /// whose name does not resolve (``ConnectFailure``): a few, as the AWS SDKs retry
    /// connection errors, their backoff (from the first windows) a fraction of a second
    /// in all; such an endpoint rarely comes back within a request's deadline, and the
    /// caller is better told at once. Never more than ``maxAttempts``.
    public var connectAttempts: Int
    /// Waits between attempts; injectable so tests can skip real sleeping.
    public var sleep: @Sendable (Duration) async throws -> Void
    /// Returns a uniform value in `0...1`; injectable so tests can pin the jitter.
    public var random: @Sendable () -> Double

    /// Creates a policy; the defaults suit DynamoDB-style throttling (8 attempts, 25 ms base,
    /// 5 s cap) and try a refused endpoint 3 times.
    public init(
        maxAttempts: Int = 8,
        baseDelay: Duration = .milliseconds(25),
        maxDelay: Duration = .seconds(5),
        connectAttempts: Int = 3,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.connectAttempts = max(1, connectAttempts)
        self.sleep = sleep
        self.random = random
    }

    /// A policy that never retries, for callers that handle failures themselves.
    public static var none: RetryPolicy { RetryPolicy(maxAttempts: 1) }

    /// For a connection that should come back for as long as its owner wants it (a watch):
    /// no limit on attempts, windows from 100 ms up to 5 s.
    public static var reconnect: RetryPolicy {
        RetryPolicy(maxAttempts: .max, baseDelay: .milliseconds(100), maxDelay: .seconds(5))
    }

    /// The upper bound of the backoff window before retry number `retry` (0-based).
    public func backoffCap(forRetry retry: Int) -> Duration {
        let exponent = min(retry, 30)
        let window = baseDelay * (1 << exponent)
        return window < maxDelay ? window : maxDelay
    }

    /// A full-jitter delay for retry number `retry` (0-based).
    public func delay(forRetry retry: Int) -> Duration {
        let fraction = min(max(random(), 0), 1)
        return backoffCap(forRetry: retry) * fraction
    }
}
