import DiscfgCore
import Foundation
import NIOSSL

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
