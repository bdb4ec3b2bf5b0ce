import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The file descriptors this process was started with. `exec` hands exactly these on to
/// the command (a caller's, such as sockets passed for activation), and none that discfg
/// opened itself.
enum InheritedDescriptors {
    /// Read once, as `main` begins.
    static let atStart: Set<Int32> = current()

    /// The descriptors open now, read from `/proc/self/fd`.
    static func current() -> Set<Int32> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(names.compactMap { Int32($0) })
    }

    /// Marks every descriptor opened since `main` began close-on-exec.
    static func closeOwnOnExec() {
        for fd in current().subtracting(atStart) where fd > 2 {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}
