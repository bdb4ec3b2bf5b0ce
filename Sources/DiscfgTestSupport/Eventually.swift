import Foundation

/// A condition that did not come true in time.
public struct NeverHappened: Error, CustomStringConvertible {
    /// What was awaited, as the caller named it.
    public let what: String
    /// How long it was awaited.
    public let timeout: Duration

    public var description: String { "never happened within \(timeout): \(what)" }
}

/// Waits until `probe` returns a value, asking it again every `interval`, and returns
/// that value.
///
/// For a condition of another process or of a server's inner state that announces no
/// event to wait on — a port refused or served, a log line in a file, a metric, a row.
/// Wait on the event itself where there is one: a watch event, a line of a child's
/// output (``ChildProcess/waitForOutput(timeout:_:)``), a process's end
/// (``ChildProcess/termination(within:)``), an `AsyncStream`.
///
/// ```swift
/// let reply = try await eventually("the token is refused") {
///     let reply = try await server.get("/v1/app", headers: bearer(token))
///     return reply.status == 401 ? reply : nil
/// }
/// ```
///
/// - Parameters:
///   - what: what is awaited, for the error.
///   - timeout: how long to wait before giving up.
///   - interval: how long to wait between two looks.
///   - probe: one look; nil while the condition does not hold. What it throws ends the wait.
/// - Throws: ``NeverHappened`` after `timeout`; `CancellationError` when the task is cancelled.
public func eventually<T>(
    _ what: String, timeout: Duration = .seconds(10), interval: Duration = .milliseconds(20),
    _ probe: () async throws -> T?
) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = try await probe() { return value }
        guard ContinuousClock.now < deadline else { throw NeverHappened(what: what, timeout: timeout) }
        try await Task.sleep(for: interval)
    }
}

/// Waits until `condition` holds, asking it again every `interval`.
/// The form of `eventually` for a condition with no value to return.
/// - Throws: ``NeverHappened`` after `timeout`; `CancellationError` when the task is cancelled.
public func eventually(
    _ what: String, timeout: Duration = .seconds(10), interval: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async throws {
    let _: Bool = try await eventually(what, timeout: timeout, interval: interval) { try await condition() ? true : nil }
}
