import DiscfgCore
import Foundation
import Synchronization

/// Consumes a watch in the background and records what it delivers, so a test can write
/// and then wait, with a deadline, for the events it expects. Every wait throws an
/// ``ExpectationFailure`` after its timeout instead of hanging.
package final class WatchRecorder: Sendable {
    /// How a watch ended.
    package enum Ending: Sendable {
        case finished
        case failed(any Error)

        /// The error's code when it ended with a ``DiscfgError``.
        package var code: DiscfgError.Code? {
            if case .failed(let error as DiscfgError) = self { error.code } else { nil }
        }
    }

    private struct State {
        var events: [Event] = []
        var ending: Ending?
    }

    /// Shared with the consuming task, which must not keep the recorder alive.
    private final class Log: Sendable {
        let state = Mutex(State())
    }

    private let log: Log
    private let task: Task<Void, Never>

    /// Starts consuming `stream`.
    package init(_ stream: AsyncThrowingStream<Event, any Error>) {
        let log = Log()
        self.log = log
        task = Task {
            do {
                for try await event in stream {
                    log.state.withLock { $0.events.append(event) }
                }
                log.state.withLock { $0.ending = .finished }
            } catch {
                log.state.withLock { $0.ending = .failed(error) }
            }
        }
    }

    deinit { task.cancel() }

    /// What was delivered so far.
    package var events: [Event] { log.state.withLock { $0.events } }

    /// How the watch ended, or nil while it runs.
    package var ending: Ending? { log.state.withLock { $0.ending } }

    /// Cancels the consuming task.
    package func cancel() { task.cancel() }

    /// Waits until at least `count` events arrived and returns all of them.
    package func waitForEvents(
        _ count: Int, timeout: Duration = .seconds(20), fileID: String = #fileID, line: Int = #line
    ) async throws -> [Event] {
        try await waitUntil("\(count) events", timeout: timeout, fileID: fileID, line: line) { $0.events.count >= count }
        return events
    }

    /// Waits until the watch ends and returns how.
    package func waitForEnding(timeout: Duration = .seconds(20), fileID: String = #fileID, line: Int = #line) async throws -> Ending {
        try await waitUntil("the watch to end", timeout: timeout, fileID: fileID, line: line) { $0.ending != nil }
        return try require(ending, fileID: fileID, line: line)
    }

    private func waitUntil(
        _ what: String, timeout: Duration, fileID: String, line: Int, _ done: (State) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !log.state.withLock({ done($0) }) {
            guard ContinuousClock.now < deadline else {
                let seen = log.state.withLock { state in (state.events.map(\.revision.rawValue), state.ending.map { "\($0)" } ?? "still running") }
                throw ExpectationFailure("timed out after \(timeout) waiting for \(what); got revisions \(seen.0), watch \(seen.1)", fileID: fileID, line: line)
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
