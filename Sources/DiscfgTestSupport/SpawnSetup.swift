import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `posix_spawn` file actions and attributes for one child, and the descriptors the
/// parent opened for it.
struct SpawnSetup {
    private let executable: String
    private var actions = posix_spawn_file_actions_t()
    private var attributes = posix_spawnattr_t()
    /// Descriptors opened in the parent for this child; closed after the spawn, but for
    /// the ends the parent keeps.
    private var opened: [Int32] = []

    init(executable: String) throws {
        self.executable = executable
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
    }

    /// Frees the actions and attributes, and closes every descriptor still open.
    mutating func release() {
        posix_spawn_file_actions_destroy(&actions)
        posix_spawnattr_destroy(&attributes)
        for fd in opened { close(fd) }
        opened = []
    }

    /// A pipe whose two ends are closed on exec: the child gets only what `dup` gives it.
    mutating func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard GNU.pipe2(&fds, O_CLOEXEC) == 0 else { throw failure("pipe2") }
        opened += fds
        return (fds[0], fds[1])
    }

    /// Makes `fd` the child's descriptor `target`.
    mutating func dup(_ fd: Int32, as target: Int32) throws {
        let code = posix_spawn_file_actions_adddup2(&actions, fd, target)
        guard code == 0 else { throw ChildProcess.LaunchError(executable: executable, code: code, call: "posix_spawn_file_actions_adddup2") }
    }

    /// Opens `path` in the parent, close-on-exec, and makes it the child's `target`.
    mutating func open(_ path: String, as target: Int32, flags: Int32) throws {
        let fd = Glibc.open(path, flags | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("open \(path)") }
        opened.append(fd)
        try dup(fd, as: target)
    }

    /// Starts the child in `directory`.
    mutating func changeDirectory(to directory: String) throws {
        let code = GNU.addChangeDirectory(&actions, directory)
        guard code == 0 else { throw ChildProcess.LaunchError(executable: executable, code: code, call: "posix_spawn_file_actions_addchdir_np \(directory)") }
    }

    /// Spawns the child with `arguments` (the first is its name) and `environment`
    /// (`NAME=value` strings), and returns its PID.
    mutating func start(_ arguments: [String], environment: [String], ownProcessGroup: Bool) throws -> pid_t {
        // After the dup2s: every other descriptor, opened by anyone in this process
        // without close-on-exec, stays out of the child.
        let code = GNU.addCloseFrom(&actions, 3)
        guard code == 0 else { throw ChildProcess.LaunchError(executable: executable, code: code, call: "posix_spawn_file_actions_addclosefrom_np") }

        // The spawning thread's blocked signals and ignored dispositions would otherwise
        // pass to the child (a Dispatch thread blocks most signals, so SIGTERM would not
        // reach a child it started).
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigemptyset(&all)
        for signal in Int32(1)..<32 where signal != SIGKILL && signal != SIGSTOP { sigaddset(&all, signal) }
        posix_spawnattr_setsigdefault(&attributes, &all)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if ownProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = executable.contains("/")
            ? posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            : posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw ChildProcess.LaunchError(executable: executable, code: spawned, call: "posix_spawn") }
        return pid
    }

    /// Closes the parent's copies of what it opened for the child, but for `kept`.
    mutating func closeParentCopies(except kept: Set<Int32>) {
        for fd in opened where !kept.contains(fd) { close(fd) }
        opened = []
    }

    private func failure(_ call: String) -> ChildProcess.LaunchError {
        ChildProcess.LaunchError(executable: executable, code: errno, call: call)
    }
}

/// GNU extensions of glibc that Swift's Glibc module does not declare (they need
/// `_GNU_SOURCE`), looked up once by name.
private enum GNU {
    private static func symbol<T>(_ name: String, as type: T.Type) -> T {
        // The handle of the program itself: its symbols and those of the libraries it loaded.
        guard let address = dlsym(dlopen(nil, RTLD_NOW), name) else { fatalError("glibc lacks \(name) (glibc 2.34 or later is needed)") }
        return unsafeBitCast(address, to: type)
    }

    /// `pipe2(fds, flags)`.
    static let pipe2 = symbol("pipe2", as: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    /// `posix_spawn_file_actions_addchdir_np(actions, path)`.
    static let addChangeDirectory = symbol(
        "posix_spawn_file_actions_addchdir_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self
    )
    /// `posix_spawn_file_actions_addclosefrom_np(actions, from)`.
    static let addCloseFrom = symbol(
        "posix_spawn_file_actions_addclosefrom_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self
    )
}
