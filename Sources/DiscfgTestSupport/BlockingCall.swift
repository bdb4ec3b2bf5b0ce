import Foundation

/// Runs a call that blocks (a socket read with a timeout, say) on a thread of its own, so
/// that it holds none of the few threads of Swift's cooperative pool while it waits: with
/// tests running in parallel, a blocked pool thread delays every other test.
///
/// ```swift
/// let reply = try await BlockingCall.run { try connection.readToEnd(waiting: 10) }
/// ```
public enum BlockingCall {
    /// Runs `body` on a new thread and returns what it returned, or throws what it threw.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try body() })
            }
            thread.name = "blocking call"
            thread.start()
        }
    }

    /// Runs `body`, which cannot throw, on a new thread and returns what it returned.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: body())
            }
            thread.name = "blocking call"
            thread.start()
        }
    }
}
