import DiscfgCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The last known good copy of each config on disk (`discfg agent --cache-dir`): one
/// ``PublishedSnapshot`` file per config, replaced atomically after each change (a temp
/// file, fsync, rename, fsync of the directory), so a crash at any moment leaves the old
/// state or the new one, never a mix.
///
/// What is read back is what this agent wrote: the directory must be its user's and
/// writable by nobody else (created 0700 when missing); no file in it is opened through a
/// symbolic link; and each copy is signed (HMAC-SHA256) with a key the cache makes at its
/// first start and keeps beside the copies (``keyFileName``, 0600). A copy that fails its
/// integrity check or its signature (planted, edited, or written under another key) is
/// never read.
public struct SnapshotCache: Sendable {
    /// The directory.
    public let directory: String
    /// The key the copies are signed with.
    private let key: SnapshotKey

    /// The file in the directory that holds the key, 64 hex digits.
    public static let keyFileName = "snapshot.key"

    /// A cache in `directory`, created (0700) if missing.
    /// - Throws: `invalidArgument` (field `--cache-dir`) when it is not a directory (a
    ///   file, a symbolic link), belongs to another user, can be written by group or
    ///   others, cannot be written, or holds a key file that is not the cache's.
    /// This cache's agent's instance id: the entity its reads name when they name none, so
    /// a host keeps one version of a staged deployment across restarts. Derived from the
    /// cache's key, so it lasts as long as the cache and tells nothing of the key.
    public var instanceID: String { key.derivedName("discfg agent instance id") }

    public init(directory: String) throws {
        self.directory = directory
        try Self.prepare(directory)
        key = try Self.loadKey(in: directory)
        removeAbandonedWrites()
    }

    /// Creates the directory 0700, or checks (with lstat, so a link is not followed) that
    /// the one there is a directory that only the agent's user can change.
    private static func prepare(_ directory: String) throws {
        var status = stat()
        if lstat(directory, &status) != 0 {
            guard errno == ENOENT else { throw invalid("\(directory) cannot be read: \(String(cString: strerror(errno)))") }
            let parent = (directory as NSString).deletingLastPathComponent
            do {
                if !parent.isEmpty { try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) }
            } catch {
                throw invalid("\(directory) cannot be created: \(error.localizedDescription)")
            }
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw invalid("\(directory) cannot be created: \(String(cString: strerror(errno)))")
            }
            guard lstat(directory, &status) == 0 else { throw invalid("\(directory) cannot be read: \(String(cString: strerror(errno)))") }
        }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: throw invalid("\(directory) is a symbolic link; give the directory itself")
        default: throw invalid("\(directory) is a file, not a directory")
        }
        let user = geteuid()
        guard status.st_uid == user else {
            throw invalid(
                "\(directory) belongs to uid \(status.st_uid), not to the agent's user (uid \(user)): its owner could plant copies the agent serves or swap files for links; use a directory of the agent's user (chown \(user) \(directory))")
        }
        guard status.st_mode & 0o022 == 0 else {
            throw invalid(
                "\(directory) can be written by other users (mode \(String(status.st_mode & 0o777, radix: 8))): they could plant copies the agent serves or swap files for links; chmod 700 \(directory)")
        }
        guard access(directory, W_OK | X_OK) == 0 else { throw invalid("\(directory) is not writable") }
    }

    /// The cache's key: read from ``keyFileName``, or made there at the first start.
    private static func loadKey(in directory: String) throws -> SnapshotKey {
        let path = directory + "/" + keyFileName
        for _ in 0..<2 {
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            if fd >= 0 {
                defer { close(fd) }
                return try readKey(fd, path: path)
            }
            guard errno == ENOENT else {
                let reason = errno == ELOOP ? "is a symbolic link" : "cannot be read: \(String(cString: strerror(errno)))"
                throw invalid("the cache's key \(path) \(reason); remove it (the copies are then written again, signed with a new key)")
            }
            // Written whole under a temporary name, then linked into place: a crash leaves
            // no key or a whole one, and link() fails when another agent got there first.
            let key = SnapshotKey.generate()
            let temporary = path + ".tmp-\(getpid())"
            unlink(temporary)
            let created = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard created >= 0 else { throw invalid("the cache's key \(path) cannot be created: \(String(cString: strerror(errno)))") }
            let text = Data((key.bytes.map { String(format: "%02x", $0) }.joined() + "\n").utf8)
            let ok = writeAll(created, text) && fsync(created) == 0
            close(created)
            let linked = ok && link(temporary, path) == 0
            let reason = errno
            unlink(temporary)
            if linked { return key }
            if ok, reason == EEXIST { continue }  // another agent made it first: read theirs
            throw invalid("the cache's key \(path) cannot be written: \(String(cString: strerror(reason)))")
        }
        throw invalid("the cache's key \(path) cannot be created")
    }

    private static func readKey(_ fd: Int32, path: String) throws -> SnapshotKey {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw invalid("the cache's key \(path) is not a regular file; remove it")
        }
        guard status.st_uid == geteuid(), status.st_mode & 0o077 == 0 else {
            throw invalid(
                "the cache's key \(path) belongs to uid \(status.st_uid) with mode \(String(status.st_mode & 0o777, radix: 8)); it must be the agent's user's alone (0600): remove it, and the copies are written again under a new key")
        }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = Glibc.read(fd, &buffer, buffer.count)
        let text = count > 0 ? String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : ""
        let digits = Array(text.utf8)
        var bytes: [UInt8] = []
        if digits.count == SnapshotKey.byteCount * 2 {
            for index in stride(from: 0, to: digits.count, by: 2) {
                guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { break }
                bytes.append(byte)
            }
        }
        guard let key = SnapshotKey(bytes: bytes) else {
            throw invalid("\(path) is not the cache's key (64 hex digits); remove it, and the copies are written again under a new key")
        }
        return key
    }

    /// Removes the temp files of writes whose process is gone (killed mid-write), which
    /// nothing would read or replace: each process writes under its own pid. Those of a
    /// live process (another agent sharing the directory) are left alone.
    private func removeAbandonedWrites() {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for file in files {
            guard let marker = file.range(of: ".json.tmp-", options: .backwards), let pid = pid_t(file[marker.upperBound...]), pid > 0 else { continue }
            if kill(pid, 0) == -1, errno == ESRCH {
                unlink(directory + "/" + file)
            }
        }
    }

    /// The file holding a config's copy.
    public func path(of config: ConfigName) -> String { directory + "/" + config.description + ".json" }

    /// Writes a config's copy atomically, signed with the cache's key. The temp file is
    /// created afresh (never opened through a link someone left at its name), and the
    /// rename replaces whatever is at the copy's name, a link included, without following it.
    /// - Throws: `unavailable` naming the file when a step fails; the old file stays.
    public func write(_ snapshot: PublishedSnapshot) throws {
        let target = path(of: snapshot.config)
        let temporary = target + ".tmp-\(getpid())"
        let bytes = snapshot.encoded(signedWith: key)
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0, errno == EEXIST {
            // Left by an earlier write of this process, or planted: removed (unlink
            // removes a link, not what it points to), then made anew.
            unlink(temporary)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { throw failure("cannot create \(temporary)") }
        let ok = Self.writeAll(fd, bytes) && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, target) == 0 else {
            unlink(temporary)
            throw failure("cannot write \(target)")
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// A config's copy; nil when there is none.
    /// - Throws: `invalidArgument` (field `snapshot`) when the file is a link or not a
    ///   regular file, fails its check or its signature, or holds another config.
    public func read(_ config: ConfigName) throws -> PublishedSnapshot? {
        let path = path(of: config)
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw PublishedSnapshot.refusal("\(path) is a symbolic link, not a copy the agent wrote") }
            throw PublishedSnapshot.refusal("\(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw PublishedSnapshot.refusal("\(path) is not a regular file")
        }
        let limit = PublishedSnapshot.defaultMaxBytes
        guard status.st_size <= off_t(limit) else {
            throw PublishedSnapshot.refusal("\(path) is \(ByteSize.text(Int(status.st_size))), over the \(ByteSize.text(limit)) a snapshot may be")
        }
        let data = FileHandle(fileDescriptor: fd, closeOnDealloc: false).readDataToEndOfFile()
        let snapshot: PublishedSnapshot
        do { snapshot = try PublishedSnapshot(decoding: data, key: key) } catch let error as DiscfgError {
            let problem = error.message.hasPrefix("snapshot refused: ") ? String(error.message.dropFirst("snapshot refused: ".count)) : error.message
            throw PublishedSnapshot.refusal("\(path): \(problem)")
        }
        guard snapshot.config == config else {
            throw PublishedSnapshot.refusal("\(path) holds config \"\(snapshot.config)\", not \"\(config)\"")
        }
        return snapshot
    }

    /// The configs with a copy here (files named like a config, `CONFIG.json`).
    public func configNames() -> [ConfigName] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return files.filter { $0.hasSuffix(".json") }.compactMap { try? ConfigName(String($0.dropLast(".json".count))) }.sorted()
    }

    /// Removes a config's copy (the config is gone from the source); nothing when there is none.
    public func remove(_ config: ConfigName) {
        unlink(path(of: config))
    }

    private static func writeAll(_ fd: Int32, _ bytes: Data) -> Bool {
        bytes.withUnsafeBytes { buffer -> Bool in
            var written = 0
            while written < buffer.count {
                let count = Foundation.write(fd, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 { if errno == EINTR { continue }; return false }
                written += count
            }
            return true
        }
    }

    private static func invalid(_ problem: String) -> DiscfgError {
        DiscfgError.invalid("--cache-dir", "--cache-dir \(problem)")
    }

    private func failure(_ what: String) -> DiscfgError {
        DiscfgError(.unavailable, "the cache \(what): \(String(cString: strerror(errno)))")
    }
}
