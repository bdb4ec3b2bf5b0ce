import DiscfgCore
import Foundation
import NIOCore
import NIOSSL
import Synchronization

/// The TLS of a server: its certificate chain and key, and, for client certificates
/// (mutual TLS), the CA that signs them; read from PEM files, checked whole before
/// anything listens, and read again by ``reload()`` (SIGHUP) without dropping a
/// connection. TLS 1.2 and later only. One value serves the REST API (ALPN
/// `http/1.1`) and the etcd API (ALPN `h2`, as etcd serves).
///
/// ```swift
/// let tls = try ServerTLS(files: .init(certificate: "server.pem", key: "server.key"))
/// channel.pipeline.addHandler(tls.handler(for: .http1))
/// try tls.reload()    // new connections get the new certificate; open ones keep theirs
/// ```
public final class ServerTLS: Sendable {
    /// Where the PEM files are.
    public struct Files: Sendable, Equatable {
        /// The server's certificate, then any intermediates of its chain.
        public var certificate: String
        /// The certificate's private key (not encrypted).
        public var key: String
        /// CA certificates that sign the client certificates every connection must
        /// present; nil for no client certificates.
        public var clientCA: String?

        /// Files of a server; `clientCA` for mutual TLS.
        public init(certificate: String, key: String, clientCA: String? = nil) {
            self.certificate = certificate
            self.key = key
            self.clientCA = clientCA
        }
    }

    /// The application protocol a listener speaks, offered with ALPN.
    public enum ApplicationProtocol: Sendable {
        /// HTTP/1.1: the REST API.
        case http1
        /// HTTP/2: the etcd API's gRPC (`h2`, as etcd offers it).
        case h2
    }

    /// What the files held when they were last read.
    public struct Loaded: Sendable {
        /// The server certificate's subject, as ``CertificateSubject`` writes it.
        public var subject: String
        /// The server certificate's serial number, in hex.
        public var serial: String
        /// When the server certificate stops being valid.
        public var notValidAfter: Date
        fileprivate var http1: NIOSSLContext
        fileprivate var h2: NIOSSLContext
    }

    /// How long a connection may take to finish its TLS handshake before it is closed;
    /// until then it counts against the server's connection cap.
    public static let defaultHandshakeTimeout = Duration.seconds(10)

    /// The files read on start and on every ``reload()``.
    public let files: Files
    /// How long a handshake may take.
    public let handshakeTimeout: Duration
    private let current: Mutex<Loaded>

    /// Reads and checks `files`.
    /// - Throws: ``DiscfgError`` (`invalidArgument`, its field `certificate`, `key` or
    ///   `clientCA`) in one sentence naming the file and what is wrong: missing,
    ///   unreadable, no PEM certificate or key in it, a key file another user owns or
    ///   may read (``PEMFile/privateKey(inOwnFile:field:what:)``), a key that does not
    ///   match the certificate, a certificate expired or not yet valid.
    public init(files: Files, handshakeTimeout: Duration = ServerTLS.defaultHandshakeTimeout, now: Date = Date()) throws {
        self.files = files
        self.handshakeTimeout = handshakeTimeout
        current = Mutex(try Self.load(files, now: now))
    }

    /// Whether every connection must present a certificate signed by ``Files/clientCA``.
    public var requiresClientCertificates: Bool { files.clientCA != nil }

    /// What the files held when last read.
    public var loaded: Loaded { current.withLock { $0 } }

    /// Reads the files again; new connections get what they hold now, open ones keep
    /// theirs. When the files do not make a valid pair (half-written, mismatched,
    /// expired, a key file others may read), the previous certificate stays and the
    /// error says why.
    /// - Returns: what is served from now on.
    @discardableResult
    public func reload(now: Date = Date()) throws -> Loaded {
        let fresh = try Self.load(files, now: now)
        current.withLock { $0 = fresh }
        return fresh
    }

    /// The handler that speaks TLS for one new connection, with the context of the
    /// certificate served now; the first in its pipeline.
    public func handler(for application: ApplicationProtocol) -> NIOSSLServerHandler {
        let context = current.withLock { application == .http1 ? $0.http1 : $0.h2 }
        return NIOSSLServerHandler(context: context)
    }

    /// A line for the log: what certificate is served, and until when.
    public static func describe(_ loaded: Loaded) -> String {
        "certificate \(loaded.subject) (serial \(loaded.serial)), valid until \(loaded.notValidAfter.formatted(.iso8601))"
    }

    // MARK: Reading the files

    private static func load(_ files: Files, now: Date) throws -> Loaded {
        let chain = try PEMFile.certificates(in: files.certificate, field: "certificate", what: "TLS certificate")
        let leaf = chain[0]
        let notAfter = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
        let notBefore = Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore))
        if notAfter <= now {
            throw DiscfgError.invalid("certificate", "the TLS certificate in \(files.certificate) expired on \(notAfter.formatted(.iso8601)); renew it")
        }
        if notBefore > now {
            throw DiscfgError.invalid("certificate", "the TLS certificate in \(files.certificate) is not valid before \(notBefore.formatted(.iso8601)); check this machine's clock")
        }
        let key = try PEMFile.privateKey(inOwnFile: files.key, field: "key", what: "TLS key")
        let clientCA = try files.clientCA.map { try PEMFile.certificates(in: $0, field: "clientCA", what: "client CA") }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        if let clientCA {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates(clientCA)
            // Tells clients which CA to pick a certificate of.
            configuration.sendCANameList = true
        }
        func context(_ protocols: [String]) throws -> NIOSSLContext {
            configuration.applicationProtocols = protocols
            do {
                return try NIOSSLContext(configuration: configuration)
            } catch NIOSSLError.failedToLoadPrivateKey {
                throw DiscfgError.invalid("key", "the TLS key in \(files.key) does not match the certificate in \(files.certificate)")
            } catch {
                throw DiscfgError.invalid("certificate", "the TLS certificate in \(files.certificate) and key in \(files.key) cannot be used: \(error)")
            }
        }
        return Loaded(
            subject: CertificateSubject(leaf).description, serial: leaf.serialNumber.map { String(format: "%02x", $0) }.joined(),
            notValidAfter: notAfter, http1: try context(["http/1.1"]), h2: try context(["h2"])
        )
    }
}
