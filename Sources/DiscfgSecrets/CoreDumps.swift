import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps opened secrets out of core dumps of the process that holds them.
///
/// A crash (or `kill -QUIT`, or `gcore` by the same user) writes a process's memory to
/// disk, opened secrets and unwrapped data keys with it, often somewhere many can read
/// (`/var/crash`, `/var/lib/systemd/coredump`). A process that opens secrets calls
/// ``disable()`` once, before it opens the first: its core file size limit (soft
/// `RLIMIT_CORE`) becomes 0 and it is marked not dumpable (`PR_SET_DUMPABLE` 0), which
/// also keeps other processes of the same user from reading its memory through
/// `/proc/PID/mem` or ptrace.
///
/// Programs it starts get the limit it had: `execve` resets dumpability by itself, and
/// ``restoreLimit()`` (before an `exec`) or ``restoreLimit(of:)`` (after a spawn) puts
/// the core limit back, so discfg's choice for itself is not forced on a command.
///
/// ```swift
/// CoreDumps.disable()          // first thing, before a SecretReader opens anything
/// let reader = SecretReader(ConfigSecrets(store: store, config: config, keyring: keyring))
/// ```
public enum CoreDumps {
    /// The core limit the process had before ``disable()`` lowered it.
    private static let original = Mutex<rlimit?>(nil)

    /// Turns core dumps of this process off; later calls change nothing more.
    public static func disable() {
        original.withLock { saved in
            var limit = rlimit()
            guard getrlimit(resource, &limit) == 0 else { return }
            if saved == nil { saved = limit }
            // Only the soft limit: the hard one stays, so a program started later can be
            // given back what this process had.
            limit.rlim_cur = 0
            _ = setrlimit(resource, &limit)
        }
        setNotDumpable()
    }

    /// Whether ``disable()`` has run.
    public static var isDisabled: Bool { original.withLock { $0 != nil } }

    /// Puts this process's core limit back as it was before ``disable()``, just before it
    /// becomes another program with `exec` (whose dumpability `execve` resets).
    public static func restoreLimit() {
        original.withLock { saved in
            guard var limit = saved else { return }
            _ = setrlimit(resource, &limit)
        }
    }

    /// Gives a child spawned after ``disable()`` the core limit this process had, if the
    /// child still has the lowered one (a program that set its own keeps it).
    public static func restoreLimit(of pid: pid_t) {
        original.withLock { saved in
            guard var limit = saved else { return }
            // prlimit(2) is a GNU extension, which Glibc's module leaves out.
            typealias Prlimit = @convention(c) (pid_t, Int32, UnsafePointer<rlimit>?, UnsafeMutablePointer<rlimit>?) -> Int32
            guard let symbol = dlsym(nil, "prlimit") else { return }
            let prlimit = unsafeBitCast(symbol, to: Prlimit.self)
            let core = Int32(RLIMIT_CORE.rawValue)
            var current = rlimit()
            guard prlimit(pid, core, nil, &current) == 0, current.rlim_cur == 0, current.rlim_max == limit.rlim_max else { return }
            _ = prlimit(pid, core, &limit, nil)
        }
    }

    private static let resource = __rlimit_resource_t(RLIMIT_CORE.rawValue)
    /// `PR_SET_DUMPABLE` from `<linux/prctl.h>`, which Glibc's module does not bring in.
    private static let setDumpable: Int32 = 4

    /// `prctl(PR_SET_DUMPABLE, 0)`. prctl is variadic in C, which Swift does not call;
    /// its arguments here are all integers, passed as a fixed-argument call would.
    private static func setNotDumpable() {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        // RTLD_DEFAULT (a null handle): the symbol as the process links it.
        guard let symbol = dlsym(nil, "prctl") else { return }
        let prctl = unsafeBitCast(symbol, to: Prctl.self)
        _ = prctl(setDumpable, 0, 0, 0, 0)
    }
}
