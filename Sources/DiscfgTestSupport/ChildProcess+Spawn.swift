import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// A child could not be started.
    public struct LaunchError: Error, CustomStringConvertible {
        /// The program.
        public let executable: String
        /// The `errno` of the failing call.
        public let code: Int32
        /// The failing call.
        public let call: String

        /// The program, the call that failed and why.
        public var description: String {
            "cannot start \(executable): \(call) failed: \(String(cString: strerror(code)))"
        }
    }

    /// Names `environment(inheriting:_:)` copies unless told otherwise: where programs are
    /// found, where temporary files go, the locale.
    public static let basicEnvironment = ["PATH", "TMPDIR", "LANG", "LC_ALL"]

    /// What a Python program (moto, the fault proxy, botocore) needs of this process's
    /// environment besides the basics: HOME and pyenv's variables to find the interpreter
    /// and its packages.
    public static let pythonEnvironment = basicEnvironment + ["HOME", "PYENV*", "PYTHON*", "VIRTUAL_ENV"]

    /// An environment for a child: the named variables of this process (a name ending in
    /// `*` names every variable with that prefix), then `settings`. Nothing else of this
    /// process's environment reaches the child.
    public static func environment(inheriting names: [String] = basicEnvironment, _ settings: [String: String] = [:]) -> [String: String] {
        let mine = ProcessInfo.processInfo.environment
        var environment: [String: String] = [:]
        for name in names {
            if name.hasSuffix("*") {
                let prefix = name.dropLast()
                for (key, value) in mine where key.hasPrefix(prefix) { environment[key] = value }
            } else if let value = mine[name] {
                environment[name] = value
            }
        }
        environment.merge(settings) { _, set in set }
        return environment
    }

    /// Starts a child and returns at once; its output is collected as it comes.
    ///
    /// - Parameters:
    ///   - executable: a path, or a name looked up in this process's `PATH`.
    ///   - arguments: the arguments after the program's name.
    ///   - environment: the child's whole environment.
    ///   - directory: its working directory; this process's when nil.
    ///   - ownProcessGroup: start it in a process group of its own, and send every
    ///     ``signal(_:)`` to the whole group (a shell and the commands it runs).
    /// - Throws: ``LaunchError``.
    public static func launch(
        _ executable: String, _ arguments: [String] = [], environment: [String: String], directory: String? = nil,
        stdin: Input = .none, stdout: Destination = .capture, stderr: Destination = .capture, ownProcessGroup: Bool = false
    ) throws -> ChildProcess {
        var spawn = try SpawnSetup(executable: executable)
        defer { spawn.release() }
        var input: Int32?
        switch stdin {
        case .none:
            try spawn.open("/dev/null", as: 0, flags: O_RDONLY)
        case .bytes:
            let (read, write) = try spawn.pipe()
            try spawn.dup(read, as: 0)
            input = write
        }
        var captured: [(fd: Int32, isStdout: Bool)] = []
        for (destination, target) in [(stdout, Int32(1)), (stderr, Int32(2))] {
            switch destination {
            case .capture:
                let (read, write) = try spawn.pipe()
                try spawn.dup(write, as: target)
                captured.append((read, target == 1))
            case .discard:
                try spawn.open("/dev/null", as: target, flags: O_WRONLY)
            case .file(let path):
                try spawn.open(path, as: target, flags: O_WRONLY | O_CREAT | O_APPEND)
            case .inherit:
                break
            }
        }
        if let directory { try spawn.changeDirectory(to: directory) }
        let pid = try spawn.start(
            [executable] + arguments, environment: environment.map { "\($0.key)=\($0.value)" }, ownProcessGroup: ownProcessGroup
        )
        // The child has its copies; the parent keeps only the ends it reads or writes.
        let kept = Set(captured.map(\.fd) + (input.map { [$0] } ?? []))
        spawn.closeParentCopies(except: kept)

        let child = ChildProcess(
            pid: pid, command: ([executable] + arguments).joined(separator: " ").prefix(200).description,
            signalsGroup: ownProcessGroup, capturedStreams: captured.count
        )
        if let input, case .bytes(let bytes) = stdin { child.feed(bytes, to: input) }
        for stream in captured { child.collect(stream.fd, isStdout: stream.isStdout) }
        child.reapWhenEnded()
        return child
    }

    /// Writes `bytes` to the child's standard input on a thread of its own, then closes it.
    private func feed(_ bytes: Data, to fd: Int32) {
        let thread = Thread {
            // A child that exits without reading must not kill this process with SIGPIPE:
            // blocked on this thread, it makes the write fail with EPIPE instead.
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        break
                    }
                    offset += written
                }
            }
            close(fd)
        }
        thread.name = "child \(pid) stdin"
        thread.start()
    }

    /// Reads one of the child's streams to end of file on a thread of its own.
    private func collect(_ fd: Int32, isStdout: Bool) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                let chunk = Data(buffer[0..<count])
                self.change { state in
                    if isStdout { state.stdout.append(chunk) } else { state.stderr.append(chunk) }
                }
            }
            close(fd)
            self.change { $0.openStreams -= 1 }
        }
        thread.name = "child \(pid) \(isStdout ? "stdout" : "stderr")"
        thread.start()
    }

    /// Waits for the child's end on a thread of its own, then reaps it.
    private func reapWhenEnded() {
        let pid = self.pid
        let thread = Thread {
            // Wait without reaping, so the PID stays the child's while `signal` may use it.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
            self.change { state in
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                state.termination = Termination(waitStatus: status)
            }
        }
        thread.name = "child \(pid) reaper"
        thread.start()
    }
}
