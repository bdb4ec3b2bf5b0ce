import DiscfgCore
import Foundation
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// Certificates and keys read from PEM files, for servers and clients alike, with one
/// sentence naming the file and what is wrong when they cannot be.
///
/// ```swift
/// let roots = try PEMFile.certificates(in: "ca.pem", field: "cacert", what: "CA certificate")
/// ```
public enum PEMFile {
    /// The certificates in the PEM file at `path`, in order; at least one.
    /// - Parameters:
    ///   - field: the field the ``DiscfgError`` names.
    ///   - what: what the file is, as the message names it ("TLS certificate").
    /// - Throws: `invalidArgument`: the file is missing, unreadable, or holds no PEM
    ///   certificate.
    public static func certificates(in path: String, field: String, what: String) throws -> [NIOSSLCertificate] {
        let bytes = try read(path, field: field, what: what)
        let certificates = try? NIOSSLCertificate.fromPEMBytes(bytes)
        guard let certificates, !certificates.isEmpty else {
            throw DiscfgError.invalid(field, "the \(what) file \(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return certificates
    }

    /// The private key in the PEM file at `path`.
    /// - Throws: `invalidArgument`: the file is missing, unreadable, or holds no PEM
    ///   private key that opens without a passphrase.
    public static func privateKey(in path: String, field: String, what: String) throws -> NIOSSLPrivateKey {
        let bytes = try read(path, field: field, what: what)
        do {
            return try NIOSSLPrivateKey(bytes: bytes, format: .pem)
        } catch {
            throw DiscfgError.invalid(field, "the \(what) file \(path) holds no PEM private key that can be read (an encrypted key is not supported)")
        }
    }

    /// The private key in the PEM file at `path`, a file of this user's alone: as ssh
    /// requires of private keys, it must be a regular file that belongs to the user
    /// reading it (or to root, who can read it anyway) and that no other user may read
    /// or change, for whoever can read a server's key can pass for the server. The checks
    /// are made on the open file, so the file read is the file checked.
    /// - Throws: `invalidArgument`: as ``privateKey(in:field:what:)``, and a file that
    ///   belongs to another user, or that its group or others may read or write, naming
    ///   its owner or mode and the command that makes it private.
    public static func privateKey(inOwnFile path: String, field: String, what: String) throws -> NIOSSLPrivateKey {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            let why = errno == ENOENT ? "does not exist" : "cannot be read (\(String(cString: strerror(errno))))"
            throw DiscfgError.invalid(field, "the \(what) file \(path) \(why)")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw DiscfgError.invalid(field, "the \(what) file \(path) cannot be read (not a regular file)")
        }
        // A PEM key is a few KiB; a file far larger is no key.
        let limit = 1 << 20
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count <= limit {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, limit + 1 - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw DiscfgError.invalid(field, "the \(what) file \(path) cannot be read (\(String(cString: strerror(errno))))") }
            if got == 0 { break }
            count += got
        }
        guard count <= limit else {
            throw DiscfgError.invalid(field, "the \(what) file \(path) holds no PEM private key that can be read (it is over 1 MiB)")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: Array(bytes[0..<count]), format: .pem)
        } catch {
            throw DiscfgError.invalid(field, "the \(what) file \(path) holds no PEM private key that can be read (an encrypted key is not supported)")
        }
        // Judged once the file is known to hold a key, so a file that is none says so.
        let caller = geteuid()
        if status.st_uid != caller, status.st_uid != 0 {
            throw DiscfgError.invalid(
                field,
                "the \(what) file \(path) belongs to \(user(status.st_uid)), not to you (\(user(caller))) or root; a private key must be its user's alone, as ssh requires: if it is yours, chown \(caller) \(path)"
            )
        }
        guard status.st_mode & 0o077 == 0 else {
            throw DiscfgError.invalid(
                field,
                "the \(what) file \(path) is open to other users (mode \(String(status.st_mode & 0o777, radix: 8))); it must be readable by its owner alone: chmod 600 \(path)"
            )
        }
        return key
    }

    /// `name (uid N)`, or `uid N` for a user without a name.
    private static func user(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "\(String(cString: name)) (uid \(uid))"
    }

    private static func read(_ path: String, field: String, what: String) throws -> [UInt8] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw DiscfgError.invalid(field, "the \(what) file \(path) does not exist")
        }
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            let why = FileManager.default.isReadableFile(atPath: path) ? "not a regular file" : "permission denied"
            throw DiscfgError.invalid(field, "the \(what) file \(path) cannot be read (\(why))")
        }
    }
}
