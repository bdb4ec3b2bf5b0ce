import Crypto
import DiscfgCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A 256-bit key kept in a local file, for configs on the embedded store (or anywhere
/// KMS is not at hand): `file:///PATH`, made by `discfg key init`.
///
/// The file holds one line after a header, the key in base64, and must belong to the
/// caller (or root) and be readable by its owner alone (0600), as ssh requires of
/// private keys. Data keys are wrapped with
/// AES-256-GCM under it, authenticated with their encryption context.
public struct FileKey: KeyEncryptionKey {
    public let name: String
    /// The file's path.
    public let path: String
    private let key: SymmetricKey

    static let header = "discfg-key-v1"

    /// Reads the key at `path`.
    ///
    /// As ssh does with private keys, the file must belong to the caller (or to root, who
    /// can read it anyway) and be readable by its owner alone: a key file someone else
    /// owns may be one they can change or read, and secrets sealed with it are theirs.
    /// The checks are made on the open file, so the file read is the file checked.
    ///
    /// - Throws: `invalidArgument` naming the file when it is missing, owned by another
    ///   user, open to other users, or not a key file.
    public init(path: String) throws {
        self.path = path
        self.name = Self.name(forPath: path)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            throw DiscfgError.invalid("encryption", "key file \(path) cannot be read: \(String(cString: strerror(errno))) (make one with: discfg key init \(path))")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw DiscfgError.invalid("encryption", "key file \(path) is not a regular file")
        }
        try Self.checkOwner(status, path: path)
        guard status.st_mode & 0o077 == 0 else {
            throw DiscfgError.invalid(
                "encryption",
                "key file \(path) is open to other users (mode \(String(status.st_mode & 0o777, radix: 8))); it must be readable by its owner alone: chmod 600 \(path)"
            )
        }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = read(fd, &bytes, bytes.count)
        guard status.st_size < 1024, count >= 0, count < 1024 else {
            throw DiscfgError.invalid("encryption", "\(path) is not a discfg key file")
        }
        let text = String(decoding: bytes[0..<count], as: UTF8.self)
        let lines = text.split(whereSeparator: \.isNewline)
        guard lines.count == 2, lines[0] == Self.header, let keyBytes = Data(base64Encoded: String(lines[1])), keyBytes.count == 32 else {
            throw DiscfgError.invalid("encryption", "\(path) is not a discfg key file (made by discfg key init)")
        }
        key = SymmetricKey(data: keyBytes)
    }

    /// Refuses a key file that belongs to neither the caller nor root.
    private static func checkOwner(_ status: stat, path: String) throws {
        let caller = geteuid()
        guard status.st_uid != caller, status.st_uid != 0 else { return }
        func user(_ uid: uid_t) -> String {
            guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
            return "\(String(cString: name)) (uid \(uid))"
        }
        throw DiscfgError.invalid(
            "encryption",
            "key file \(path) belongs to \(user(status.st_uid)), not to you (\(user(caller))) or root; a key file must be its user's alone, as ssh requires of private keys: if it is yours, chown \(caller) \(path); otherwise use a key of your own (discfg key init)"
        )
    }

    /// The key that signs published snapshots (`discfg publish` and `discfg agent`'s
    /// `--snapshot-key-file`), derived from this one for that purpose alone.
    public var snapshotKey: SnapshotKey { SnapshotKey(deriving: key) }

    /// `file:///ABSOLUTE/PATH`.
    public static func name(forPath path: String) -> String { "file://" + path }

    /// Makes a new key file at `path`, readable by its owner alone; never replaces one.
    ///
    /// - Throws: `configExists`-like `invalidArgument` when a file is already there.
    public static func create(at path: String) throws -> FileKey {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = errno == EEXIST ? "a file is already there; discfg never replaces a key" : String(cString: strerror(errno))
            throw DiscfgError.invalid("path", "cannot make key file \(path): \(reason)")
        }
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let text = Data("\(header)\n\(bytes.base64EncodedString())\n".utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == text.count, synced else {
            unlink(path)
            throw DiscfgError(.unavailable, "cannot write key file \(path)")
        }
        return try FileKey(path: path)
    }

    public func generateDataKey(context: [String: String]) async throws -> (key: SymmetricKey, wrapped: Data) {
        let dataKey = SymmetricKey(size: .bits256)
        return (dataKey, try await wrap(dataKey, context: context))
    }

    public func wrap(_ dataKey: SymmetricKey, context: [String: String]) async throws -> Data {
        let bytes = dataKey.withUnsafeBytes { Data($0) }
        return try AES.GCM.seal(bytes, using: key, authenticating: DataKeyContext.canonical(context)).combined!
    }

    public func unwrap(_ wrapped: Data, context: [String: String]) async throws -> SymmetricKey {
        do {
            let box = try AES.GCM.SealedBox(combined: wrapped)
            let bytes = try AES.GCM.open(box, using: key, authenticating: DataKeyContext.canonical(context))
            guard bytes.count == 32 else { throw DiscfgError.invalid("encryption", "not a 256-bit key") }
            return SymmetricKey(data: bytes)
        } catch {
            throw DiscfgError.invalid(
                "encryption",
                "data key \"\(context["discfg:dataKey"] ?? "?")\" of config \"\(context["discfg:config"] ?? "?")\" does not open with key file \(path): it is another key, or the data key was changed"
            )
        }
    }
}
