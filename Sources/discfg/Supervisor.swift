import DiscfgCore
import DiscfgSecrets
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command as a child of `discfg exec --watch`: forwards the signals discfg gets,
/// restarts the command (or signals it) when its configuration changes, and ends with
/// the command's own exit status when it ends by itself.
final class Supervisor: Sendable {
    typealias Variables = [(name: String, value: String)]

    private let command: [String]
    private let grace: Duration
    private let reload: Int32?
    private let warn: @Sendable (String) -> Void
    private let state = Mutex(State())

    private struct State {
        var pid: pid_t = 0
        /// A signal told discfg to stop: the child's end is the end.
        var stopping = false
        /// Signals that came while no child's pid was known yet, for the next child.
        var pending: [Int32] = []
    }

    private enum Happening: Sendable {
        case exited(status: Int32)
        case changed
        case watchEnded(String)
    }

    /// Signals passed on to the child.
    static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH]

    init(command: [String], grace: Duration, reload: Int32?, warn: @escaping @Sendable (String) -> Void) {
        self.command = command
        self.grace = grace
        self.reload = reload
        self.warn = warn
    }

    /// Runs the command with `variables` until it ends by itself, and returns its status
    /// as a shell reports it (128 + N for signal N).
    func run(
        variables initial: Variables,
        changes: @escaping @Sendable () async -> AsyncThrowingStream<Event, any Error>,
        refresh: @escaping @Sendable () async throws -> Variables
    ) async throws -> Int32 {
        let (happenings, sink) = AsyncStream.makeStream(of: Happening.self)
        try forwardSignals()
        let watcher = Task {
            do {
                for try await _ in await changes() { sink.yield(.changed) }
                sink.yield(.watchEnded("the watch ended"))
            } catch {
                sink.yield(.watchEnded("\(error)"))
            }
        }
        defer { watcher.cancel() }

        var variables = initial
        var restarting = false
        try spawn(variables, sink: sink)
        for await happening in happenings {
            switch happening {
            case .exited(let status):
                // Only the current child is ever waited for: an old one is replaced only
                // once it has ended.
                guard restarting, !state.withLock({ $0.stopping }) else { return status }
                restarting = false
                try spawn(variables, sink: sink)
            case .changed:
                guard !restarting else { continue }
                let fresh: Variables
                do {
                    fresh = try await refresh()
                } catch {
                    // A refused variable (StartupVariables) lands here too: the running
                    // command keeps the environment it has, and is not restarted with it.
                    let reason = (error as? DiscfgError)?.message ?? "\(error)"
                    warn("the configuration changed but is not applied: \(reason); the command keeps running with the variables it has")
                    continue
                }
                guard !Self.same(fresh, variables) else { continue }
                if let reload {
                    variables = fresh
                    send(reload)
                    continue
                }
                variables = fresh
                restarting = true
                terminateCurrent()
            case .watchEnded(let reason):
                warn("no longer following changes: \(reason); the command keeps running")
            }
        }
        return 1
    }

    private static func same(_ a: Variables, _ b: Variables) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// SIGTERM to the current child, and SIGKILL once `grace` has passed if it is still there.
    private func terminateCurrent() {
        let pid = state.withLock { state -> pid_t in
            if state.pid > 0 { kill(state.pid, SIGTERM) }
            return state.pid
        }
        let grace = grace
        Task { [weak self] in
            try? await Task.sleep(for: grace)
            self?.state.withLock { state in
                if state.pid == pid, pid > 0 { kill(pid, SIGKILL) }
            }
        }
    }

    /// Sends `signal` to the current child, or to the next one when its pid is not yet
    /// known (a signal can come between the spawn and the pid's recording: the child
    /// may already have printed that it is ready).
    ///
    /// Under the lock, so a child that has ended (and whose pid may be reused once
    /// reaped) is never signalled: the reaper clears the pid under it before reaping.
    private func send(_ signal: Int32) {
        state.withLock { state in
            if state.pid == 0 {
                state.pending.append(signal)
            } else {
                kill(state.pid, signal)
            }
        }
    }

    /// Passes the signals discfg gets to the current child; a stop signal also means
    /// that the child's end is discfg's.
    ///
    /// The handlers are installed with `sigaction` before this returns (a dispatch
    /// signal source registers later, on another thread, and a signal that came first
    /// was lost), and only write the signal's number to a pipe; a thread of its own
    /// reads the pipe and forwards.
    private func forwardSignals() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw DiscfgError(.unavailable, "cannot make a pipe for signals: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        signalPipe = fds[1]
        let reader = fds[0]
        let thread = Thread { [weak self] in
            var byte: UInt8 = 0
            while true {
                let count = read(reader, &byte, 1)
                if count < 0, errno == EINTR { continue }
                guard count == 1, let self else { return }
                let number = Int32(byte)
                if [SIGINT, SIGTERM, SIGQUIT].contains(number) { self.state.withLock { $0.stopping = true } }
                self.send(number)
            }
        }
        thread.name = "exec signals"
        thread.start()
        for number in Self.forwarded {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = writeSignalNumber
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }

    /// Starts the command with this process's environment plus `variables`, and reports
    /// its end to `sink`.
    private func spawn(_ variables: Variables, sink: AsyncStream<Happening>.Continuation) throws {
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in variables { environment[name] = value }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        let argv = command.map { strdup($0) } + [nil]
        defer {
            envp.forEach { free($0) }
            argv.forEach { free($0) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with every signal at its default and none blocked: discfg
        // ignores the forwarded ones itself, and an ignored signal survives exec.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in Self.forwarded + [SIGPIPE] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        InheritedDescriptors.closeOwnOnExec()
        var pid: pid_t = 0
        let code = posix_spawnp(&pid, command[0], nil, &attributes, argv, envp)
        guard code == 0 else {
            throw DiscfgError.invalid("command", "cannot run \(command[0]): \(String(cString: strerror(code)))")
        }
        let child = pid
        // The command gets the core limit discfg was started with (see CoreDumps).
        CoreDumps.restoreLimit(of: child)
        let pending = state.withLock { state -> [Int32] in
            state.pid = child
            defer { state.pending = [] }
            return state.pending
        }
        for signal in pending { kill(child, signal) }
        let thread = Thread { [weak self] in
            // Wait without reaping, forget the pid, then reap: see `send`.
            var info = siginfo_t()
            while waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
            var status: Int32 = 0
            self?.state.withLock { state in
                if state.pid == child { state.pid = 0 }
            }
            // Reaped only after the pid is forgotten, so `send` never signals a reused pid.
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
            let signal = status & 0x7f
            sink.yield(.exited(status: signal == 0 ? (status >> 8) & 0xff : 128 + signal))
        }
        thread.name = "exec child \(child)"
        thread.start()
    }
}

/// Where the signal handler writes: the write end of ``Supervisor``'s signal pipe. Set
/// once, before any handler is installed.
nonisolated(unsafe) private var signalPipe: Int32 = -1

/// The handler of every forwarded signal: one async-signal-safe write.
private func writeSignalNumber(_ number: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipe, &byte, 1)
    errno = saved
}
