import DiscfgCore
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
    }

    private enum Happening: Sendable {
        case exited(pid: pid_t, status: Int32)
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
        let sources = forwardSignals()
        defer { sources.forEach { $0.cancel() } }
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
            case .exited(let pid, let status):
                guard pid == state.withLock({ $0.pid }) else { continue }
                guard restarting, !state.withLock({ $0.stopping }) else { return status }
                restarting = false
                try spawn(variables, sink: sink)
            case .changed:
                guard !restarting else { continue }
                let fresh: Variables
                do {
                    fresh = try await refresh()
                } catch {
                    warn("the configuration changed but could not be read (\(error)); the command keeps running as it is")
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
        let pid = state.withLock { $0.pid }
        kill(pid, SIGTERM)
        let grace = grace
        Task { [weak self] in
            try? await Task.sleep(for: grace)
            guard let self, self.state.withLock({ $0.pid }) == pid else { return }
            kill(pid, SIGKILL)
        }
    }

    private func send(_ signal: Int32) {
        let pid = state.withLock { $0.pid }
        if pid > 0 { kill(pid, signal) }
    }

    /// Passes the signals discfg gets to the current child; a stop signal also means
    /// that the child's end is discfg's.
    private func forwardSignals() -> [any DispatchSourceSignal] {
        Self.forwarded.map { number in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                if [SIGINT, SIGTERM, SIGQUIT].contains(number) { self.state.withLock { $0.stopping = true } }
                self.send(number)
            }
            source.resume()
            return source
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
        var pid: pid_t = 0
        let code = posix_spawnp(&pid, command[0], nil, &attributes, argv, envp)
        guard code == 0 else {
            throw DiscfgError.invalid("command", "cannot run \(command[0]): \(String(cString: strerror(code)))")
        }
        let child = pid
        state.withLock { $0.pid = child }
        let thread = Thread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
            let signal = status & 0x7f
            sink.yield(.exited(pid: child, status: signal == 0 ? (status >> 8) & 0xff : 128 + signal))
        }
        thread.name = "exec child \(child)"
        thread.start()
    }
}
