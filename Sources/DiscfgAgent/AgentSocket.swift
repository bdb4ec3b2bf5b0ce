import DiscfgCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The Unix domain socket `discfg agent --listen unix:PATH` serves on, whose file's
/// permissions decide who reads: 0600 (the agent's user alone), or 0660 and the group
/// `--socket-group` names.
///
/// The file never has looser permissions than those, not even for a moment: the process
/// umask is 0177 while the server binds (``bindingStarts()``), and the group and its
/// read-write bits are given only after (``bound()``). A socket file left by an agent that
/// is gone is replaced; one a live process answers on, or any other file, is refused.
///
/// ```swift
/// let socket = try AgentSocket(path: "/run/discfg/agent.sock", group: "app")
/// try socket.prepare()
/// socket.bindingStarts(); /* bind */ try socket.bound()
/// ```
public final class AgentSocket: Sendable {
    /// The socket file's path.
    public let path: String
    /// The group given read and write on the socket; nil for the agent's user alone.
    public let group: (name: String, id: gid_t)?
    private let savedMask = Mutex<mode_t?>(nil)
    private let boundInode = Mutex<ino_t?>(nil)

    /// The longest path a socket address holds on Linux (`sun_path` less its final NUL).
    public static let maxPathBytes = 107

    /// A socket at `path`, shared with `group` when given.
    /// - Throws: `invalidArgument` naming `--listen` for a relative or too long path, or
    ///   `--socket-group` for an unknown group or one the agent's user may not give files to.
    public init(path: String, group: String?) throws {
        guard path.hasPrefix("/") else { throw DiscfgError.invalid("--listen", "--listen unix:PATH takes an absolute path, got \(path.debugEscaped)") }
        guard path.utf8.count <= Self.maxPathBytes else {
            throw DiscfgError.invalid("--listen", "--listen unix:\(path) is \(path.utf8.count) bytes long; a socket's path may be \(Self.maxPathBytes) at most")
        }
        self.path = path
        if let group {
            guard let entry = getgrnam(group) ?? UInt32(group).flatMap({ getgrgid($0) }) else {
                throw DiscfgError.invalid("--socket-group", "--socket-group \(group.debugEscaped) is not a group of this machine")
            }
            let id = entry.pointee.gr_gid
            guard geteuid() == 0 || Self.memberGroups().contains(id) else {
                throw DiscfgError.invalid("--socket-group", "--socket-group \(group.debugEscaped): the agent's user is not in that group, so cannot give it the socket")
            }
            self.group = (group, id)
        } else {
            self.group = nil
        }
    }

    private static func memberGroups() -> Set<gid_t> {
        let count = getgroups(0, nil)
        var groups = [gid_t](repeating: 0, count: Int(max(count, 0)))
        let filled = getgroups(count, &groups)
        return Set(groups.prefix(Int(max(filled, 0)))).union([getegid()])
    }

    /// The mode the socket file ends with.
    public var mode: mode_t { group == nil ? 0o600 : 0o660 }

    /// Checks the path before binding: its directory exists; a socket file there whose
    /// agent is gone is removed; anything else there is refused.
    /// - Throws: `invalidArgument` (field `--listen`) naming the path and what is there.
    public func prepare() throws {
        let directory = (path as NSString).deletingLastPathComponent
        var status = stat()
        guard stat(directory.isEmpty ? "/" : directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw DiscfgError.invalid("--listen", "--listen unix:\(path): the directory \(directory) does not exist")
        }
        guard lstat(path, &status) == 0 else {
            guard errno == ENOENT else { throw DiscfgError.invalid("--listen", "--listen unix:\(path) cannot be checked: \(String(cString: strerror(errno)))") }
            return
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw DiscfgError.invalid("--listen", "--listen unix:\(path): a file that is not a socket is there; remove it or choose another path")
        }
        guard !answers() else {
            throw DiscfgError.invalid("--listen", "--listen unix:\(path): another process is serving on that socket; stop it or choose another path")
        }
        // A socket nothing listens on: what an agent that was killed leaves.
        guard unlink(path) == 0 || errno == ENOENT else {
            throw DiscfgError.invalid("--listen", "--listen unix:\(path): the stale socket there cannot be removed: \(String(cString: strerror(errno)))")
        }
    }

    /// Whether a process accepts connections on the socket now.
    private func answers() -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return result == 0
    }

    /// Call just before the server binds: the socket file is then made 0600 at once.
    public func bindingStarts() {
        let previous = umask(0o177)
        savedMask.withLock { $0 = previous }
    }

    /// Call once the server listens: restores the umask, then gives the socket to the
    /// group, and only then opens it to the group.
    /// - Throws: `unavailable` when the group cannot be given; the socket stays 0600.
    public func bound() throws {
        if let previous = savedMask.withLock({ saved in defer { saved = nil }; return saved }) { umask(previous) }
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else {
            throw DiscfgError(.unavailable, "the socket \(path) is not there after binding")
        }
        boundInode.withLock { $0 = status.st_ino }
        guard let group else { return }
        guard lchown(path, uid_t.max, group.id) == 0, chmod(path, 0o660) == 0 else {
            throw DiscfgError(.unavailable, "cannot give the socket \(path) to group \(group.name): \(String(cString: strerror(errno))); it stays the agent's user's alone")
        }
    }

    /// Removes the socket file when it is still the one this agent bound.
    public func remove() {
        guard let inode = boundInode.withLock({ $0 }) else { return }
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK, status.st_ino == inode else { return }
        unlink(path)
    }
}
