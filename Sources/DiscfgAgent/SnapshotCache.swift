import DiscfgCore
import Foundation

/// The last known good copy of each config on disk (`discfg agent --cache-dir`): one
/// ``PublishedSnapshot`` file per config, replaced atomically after each change (a temp
/// file, fsync, rename, fsync of the directory), so a crash at any moment leaves the old
/// state or the new one, never a mix. A file that fails its integrity check is never read.
public struct SnapshotCache: Sendable {
    /// The directory.
    public let directory: String

    /// A cache in `directory`, created if missing.
    /// - Throws: `invalidArgument` (field `--cache-dir`) when it is a file or cannot be written.
    public init(directory: String) throws {
        self.directory = directory
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw DiscfgError.invalid("--cache-dir", "--cache-dir \(directory) is a file, not a directory") }
        } else {
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                throw DiscfgError.invalid("--cache-dir", "--cache-dir \(directory) cannot be created: \(error.localizedDescription)")
            }
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw DiscfgError.invalid("--cache-dir", "--cache-dir \(directory) is not writable")
        }
        removeAbandonedWrites()
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

    /// Writes a config's copy atomically.
    /// - Throws: `unavailable` naming the file when a step fails; the old file stays.
    public func write(_ snapshot: PublishedSnapshot) throws {
        let target = path(of: snapshot.config)
        let temporary = target + ".tmp-\(getpid())"
        let bytes = snapshot.encoded()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporary)") }
        var written = 0
        let ok = bytes.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let count = Foundation.write(fd, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 { if errno == EINTR { continue }; return false }
                written += count
            }
            return fsync(fd) == 0
        }
        close(fd)
        guard ok, rename(temporary, target) == 0 else {
            unlink(temporary)
            throw failure("cannot write \(target)")
        }
        let directoryFD = open(directory, O_RDONLY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// A config's copy; nil when there is none.
    /// - Throws: `invalidArgument` (field `snapshot`) when the file fails its check, or holds another config.
    public func read(_ config: ConfigName) throws -> PublishedSnapshot? {
        guard let data = FileManager.default.contents(atPath: path(of: config)) else { return nil }
        let snapshot = try PublishedSnapshot(decoding: data)
        guard snapshot.config == config else {
            throw PublishedSnapshot.refusal("\(path(of: config)) holds config \"\(snapshot.config)\", not \"\(config)\"")
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

    private func failure(_ what: String) -> DiscfgError {
        DiscfgError(.unavailable, "the cache \(what): \(String(cString: strerror(errno)))")
    }
}
