import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`: the one way tests and benchmarks run a
/// program (the built `discfg`, moto, the fault proxy, a shell loop).
///
/// Everything the child gets is explicit: its arguments, its whole environment (see
/// ``environment(inheriting:_:)``), its working directory and its standard input (bytes,
/// or `/dev/null`). It inherits no other file descriptor of this process — its standard
/// streams are set with `dup2` and every other descriptor is closed in the child — and it
/// starts with no signal blocked and every signal at its default action, whatever thread
/// spawned it.
///
/// Standard output and error are read on threads of their own and the exit is awaited by
/// a thread of its own, so no task of Swift's cooperative pool blocks on a child. Any
/// number of tasks may launch, read, signal and await children at once. A long-running
/// child is a ``TestServer``: in a `withServer { }` scope it is stopped and reaped before
/// the test ends.
///
/// ```swift
/// let result = try await ChildProcess.run(ChildProcess.discfg.path, ["get", "app", "db/host"],
///                                         environment: ChildProcess.environment(["HOME": home]))
/// #expect(result.status == 0, "\(result.stderr)")
///
/// let server = try ChildProcess.launch("python3", ["-m", "http.server"], environment: ChildProcess.environment())
/// // …
/// await server.stop()
/// ```
public final class ChildProcess: TestServer {
    /// What the child reads on standard input.
    public enum Input: Sendable {
        /// `/dev/null`: reading gives end of file at once.
        case none
        /// These bytes, then end of file.
        case bytes(Data)
    }

    /// Where one of the child's output streams goes.
    public enum Destination: Sendable {
        /// Into ``output``, through a pipe.
        case capture
        /// To `/dev/null`.
        case discard
        /// Appended to the file at this path (created if missing).
        case file(String)
        /// To the same stream of this process.
        case inherit
    }

    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It called `exit` with this status.
        case exited(Int32)
        /// This signal ended it.
        case signalled(Int32)

        /// The shell's number for it: the exit status, or 128 + the signal.
        public var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }

        /// "exited with status N" or "killed by signal N".
        public var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }

        /// Decodes a status from `waitpid`.
        init(waitStatus: Int32) {
            let signal = waitStatus & 0x7f
            self = signal == 0 ? .exited((waitStatus >> 8) & 0xff) : .signalled(signal)
        }
    }

    /// What a child printed, and how it ended (nil while it runs).
    public struct Output: Sendable {
        /// How it ended; nil while it runs.
        public var termination: Termination?
        /// Standard output's bytes.
        public var stdoutData: Data
        /// Standard error's bytes.
        public var stderrData: Data

        /// The exit status as a shell reports it (128 + the signal for a killed child); -1 while it runs.
        public var status: Int32 { termination?.status ?? -1 }
        /// Standard output as UTF-8 text.
        public var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
        /// Standard error as UTF-8 text.
        public var stderr: String { String(decoding: stderrData, as: UTF8.self) }
        /// Standard output's complete lines.
        public var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
        /// Both streams, for a failure message.
        public var logs: String { "stdout:\n\(stdout)\nstderr:\n\(stderr)" }
    }

    /// A child did not finish, or did not print what was awaited, in time.
    public struct TimedOut: Error, CustomStringConvertible {
        /// The command line.
        public let command: String
        /// What was awaited.
        public let awaited: String
        /// The time allowed.
        public let timeout: Duration
        /// What the child had printed by then.
        public let output: Output

        /// What was awaited, for how long, and everything the child printed.
        public var description: String {
            "\(command): \(awaited) did not happen within \(timeout); \(output.termination?.description ?? "still running")\n\(output.logs)"
        }
    }

    /// The child's process ID (and its process group's, if it has its own).
    public let pid: pid_t
    /// The command line, for messages.
    public let command: String
    /// Whether signals go to the child's whole process group.
    let signalsGroup: Bool
    let state: Mutex<State>

    init(pid: pid_t, command: String, signalsGroup: Bool, capturedStreams: Int) {
        self.pid = pid
        self.command = command
        self.signalsGroup = signalsGroup
        self.state = Mutex(State(openStreams: capturedStreams))
    }

    /// Everything printed so far, and the termination once the child has ended.
    public var output: Output {
        state.withLock { Output(termination: $0.termination, stdoutData: $0.stdout, stderrData: $0.stderr) }
    }

    /// Whether the child has not yet ended (been reaped).
    public var isRunning: Bool { state.withLock { $0.termination == nil } }

    /// Starts a child and awaits its end and all it printed (see ``wait(timeout:)``).
    ///
    /// - Parameters:
    ///   - executable: a path, or a name looked up in this process's `PATH`.
    ///   - timeout: how long it may run before it is killed and ``TimedOut`` is thrown.
    /// - Throws: ``LaunchError`` when it cannot be started, ``TimedOut``.
    public static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String], directory: String? = nil,
        stdin: Input = .none, stdout: Destination = .capture, stderr: Destination = .capture, timeout: Duration = .seconds(300)
    ) async throws -> Output {
        let child = try launch(executable, arguments, environment: environment, directory: directory, stdin: stdin, stdout: stdout, stderr: stderr)
        return try await child.wait(timeout: timeout)
    }

    /// Waits until the child has ended and its captured streams are closed, and returns
    /// what it printed. After `timeout` the child is killed (SIGKILL) and ``TimedOut`` is
    /// thrown; cancelling the waiting task kills it too.
    public func wait(timeout: Duration? = nil) async throws -> Output {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let finished = await until(deadline) { state in
            state.termination != nil && state.openStreams == 0
                ? Output(termination: state.termination, stdoutData: state.stdout, stderrData: state.stderr) : nil
        }
        if let finished { return finished }
        _ = await kill()
        try Task.checkCancellation()
        throw TimedOut(command: command, awaited: "the end of the process and its output", timeout: timeout ?? .zero, output: output)
    }

    /// How the child ended, once it has; nil if it still runs after `timeout`. The child
    /// is left running.
    public func termination(within timeout: Duration) async -> Termination? {
        await until(ContinuousClock.now + timeout) { $0.termination }
    }

    /// Waits until what the child printed gives `match` a value, and returns it.
    ///
    /// `T` must not be optional: spell the closure's type out (`{ (output) -> [String]? in … }`)
    /// where the compiler could take `T` to be optional, or a `nil` meaning "not yet" is
    /// taken as a match.
    ///
    /// - Throws: ``TimedOut`` when nothing matched within `timeout`, or the child ended
    ///   and closed its streams without a match; the child is left as it is.
    public func waitForOutput<T: Sendable>(timeout: Duration, _ match: @escaping @Sendable (Output) -> T?) async throws -> T {
        let found: Result<T, TimedOut>? = await until(ContinuousClock.now + timeout) { state in
            let output = Output(termination: state.termination, stdoutData: state.stdout, stderrData: state.stderr)
            if let value = match(output) { return .success(value) }
            if state.termination != nil && state.openStreams == 0 {
                return .failure(TimedOut(command: self.command, awaited: "the awaited output", timeout: timeout, output: output))
            }
            return nil
        }
        try Task.checkCancellation()
        switch found {
        case .success(let value): return value
        case .failure(let ended): throw ended
        case nil: throw TimedOut(command: command, awaited: "the awaited output", timeout: timeout, output: output)
        }
    }

    /// Sends `signal` to the child (to its process group if it was launched in one of its
    /// own), unless it has already been reaped.
    public func signal(_ signal: Int32) {
        // Under the lock, so the reaper cannot free the PID for reuse in between.
        state.withLock { state in
            guard state.termination == nil else { return }
            _ = Glibc.kill(signalsGroup ? -pid : pid, signal)
        }
    }

    /// Sends `signal` (SIGKILL unless told) and waits until the child has ended.
    ///
    /// Cancelling the waiting task does not stop the wait: a SIGKILL is then sent, so the
    /// child is reaped before this returns.
    @discardableResult
    public func kill(_ signal: Int32 = SIGKILL) async -> Termination {
        self.signal(signal)
        if let ended = await until(nil, { $0.termination }) { return ended }
        // Cancelled: make sure it ends, and wait in a task the cancellation does not reach.
        self.signal(SIGKILL)
        return await Task { await self.until(nil) { $0.termination } ?? .signalled(SIGKILL) }.value
    }

    /// Asks the child to end (SIGTERM), kills it (SIGKILL) if it has not within five
    /// seconds, and waits until it has ended. Nothing when it already has.
    public func stop() async {
        signal(SIGTERM)
        if await termination(within: .seconds(5)) != nil { return }
        await kill(SIGKILL)
    }
}
