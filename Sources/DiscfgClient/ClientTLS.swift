import DiscfgCore
import DiscfgNetwork
import NIOSSL

/// How a client reaches a discfg server over `https://`: the CA it trusts (a private
/// one, instead of the system's), and the certificate it presents when the server asks
/// for one (mutual TLS). TLS 1.2 and later.
///
/// ```swift
/// let tls = ClientTLS(caCertificate: "ca.pem", certificate: "deployer.pem", key: "deployer.key")
/// let client = try ConfigClient(url: URL(string: "https://config.internal:8899")!, tls: tls)
/// ```
public struct ClientTLS: Sendable, Equatable {
    /// A PEM file of the CA certificates to trust, instead of the system's; nil for the
    /// system's (`--cacert`, `DISCFG_CACERT`).
    public var caCertificate: String?
    /// A PEM file of the client's certificate (and its chain), for servers that ask for
    /// one (`--cert`, `DISCFG_CERT`).
    public var certificate: String?
    /// The PEM file of the certificate's private key (`--key`, `DISCFG_KEY`).
    public var key: String?

    /// A client's TLS settings; every file is read when a client is made.
    public init(caCertificate: String? = nil, certificate: String? = nil, key: String? = nil) {
        self.caCertificate = caCertificate
        self.certificate = certificate
        self.key = key
    }

    /// The settings `DISCFG_CACERT`, `DISCFG_CERT` and `DISCFG_KEY` give (empty values
    /// count as unset); nil when none is set.
    public init?(environment: [String: String]) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        self.init(caCertificate: value("DISCFG_CACERT"), certificate: value("DISCFG_CERT"), key: value("DISCFG_KEY"))
        if self == ClientTLS() { return nil }
    }

    /// These settings over `base`'s: each one given here wins.
    public func over(_ base: ClientTLS?) -> ClientTLS {
        ClientTLS(caCertificate: caCertificate ?? base?.caCertificate, certificate: certificate ?? base?.certificate, key: key ?? base?.key)
    }

    /// The files read into swift-nio-ssl's configuration.
    /// - Throws: `invalidArgument` naming the file and what is wrong with it, or a
    ///   certificate given without its key (or a key without its certificate).
    public func configuration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let caCertificate {
            configuration.trustRoots = .certificates(try PEMFile.certificates(in: caCertificate, field: "cacert", what: "CA certificate"))
        }
        switch (certificate, key) {
        case (nil, nil):
            break
        case (let certificate?, let key?):
            let chain = try PEMFile.certificates(in: certificate, field: "cert", what: "client certificate")
            configuration.certificateChain = chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(try PEMFile.privateKey(in: key, field: "key", what: "client key"))
        case (_?, nil):
            throw DiscfgError.invalid("key", "a client certificate needs its key: give --key (DISCFG_KEY) with --cert")
        case (nil, _?):
            throw DiscfgError.invalid("cert", "a client key needs its certificate: give --cert (DISCFG_CERT) with --key")
        }
        // Made once here, so a key that does not match its certificate is named now
        // rather than as a failure to reach the server.
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch NIOSSLError.failedToLoadPrivateKey {
            throw DiscfgError.invalid("key", "the client key in \(key ?? "") does not match the certificate in \(certificate ?? "")")
        }
        return configuration
    }

    /// What a failed TLS handshake means for the person at the command line, when
    /// `error` is one: the server's certificate is not trusted, or the server wants a
    /// client certificate (or refused the one given); nil for other errors.
    static func explain(_ error: any Error) -> String? {
        guard error is NIOSSLError || error is BoringSSLError else { return nil }
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "its TLS certificate is not signed by a CA this client trusts (give the CA with --cacert or DISCFG_CACERT)"
        }
        if text.contains("ALERT_CERTIFICATE_REQUIRED") || text.contains("ALERT_UNKNOWN_CA") || text.contains("ALERT_HANDSHAKE_FAILURE")
            || text.contains("ALERT_BAD_CERTIFICATE")
        {
            return "it refused the TLS handshake: it requires a client certificate of its CA (give one with --cert and --key, or DISCFG_CERT and DISCFG_KEY)"
        }
        return "the TLS handshake failed (\(text))"
    }
}
