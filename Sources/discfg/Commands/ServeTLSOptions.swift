import ArgumentParser
import DiscfgAPI
import DiscfgCore
import DiscfgEtcd
import DiscfgNetwork
import Foundation

/// `serve`'s TLS: the server's certificate and key, and the client certificates it
/// requires (mutual TLS) with their roles.
struct ServeTLSOptions: ParsableArguments {
    @Option(name: .customLong("tls-cert"), help: ArgumentHelp(
        "Serve TLS (1.2 and later) with this certificate (PEM; intermediates after it), for the REST API and the etcd API (ALPN h2). Read again on SIGHUP.",
        valueName: "file"
    ))
    var certificate: String?
    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The certificate's private key (PEM, not encrypted).", valueName: "file"))
    var key: String?
    @Option(name: .customLong("tls-client-ca"), help: ArgumentHelp(
        "Require a client certificate signed by these CA certificates (PEM) on every connection of both APIs (mutual TLS). Read again on SIGHUP.",
        valueName: "file"
    ))
    var clientCA: String?
    @Option(name: .customLong("tls-client-roles"), help: ArgumentHelp(
        "Roles of client certificates by common name, as tokens have them: CN=NAME=ROLE[@CONFIG[+CONFIG]],... (e.g. CN=deployer=write@demo,CN=ops=admin). A certificate not listed is no credential.",
        valueName: "list"
    ))
    var clientRoles: String?

    /// The server's TLS, read and checked; nil without `--tls-cert`.
    /// - Throws: a usage error in one line: a flag without its partner, or files that
    ///   cannot serve (missing, unreadable, mismatched, expired).
    func serverTLS() throws -> ServerTLS? {
        switch (certificate, key) {
        case (nil, nil):
            if clientCA != nil { throw usage("--tls-client-ca needs TLS: give --tls-cert and --tls-key too", field: "--tls-client-ca") }
            if clientRoles != nil { throw usage("--tls-client-roles needs client certificates: give --tls-client-ca, --tls-cert and --tls-key", field: "--tls-client-roles") }
            return nil
        case (_?, nil): throw usage("--tls-cert needs its private key: give --tls-key too", field: "--tls-key")
        case (nil, _?): throw usage("--tls-key needs its certificate: give --tls-cert too", field: "--tls-cert")
        case (let certificate?, let key?):
            if clientRoles != nil, clientCA == nil {
                throw usage("--tls-client-roles needs client certificates: give --tls-client-ca", field: "--tls-client-roles")
            }
            do {
                return try ServerTLS(files: .init(certificate: certificate, key: key, clientCA: clientCA))
            } catch let error as DiscfgError {
                let flag = ["key": "--tls-key", "clientCA": "--tls-client-ca"][error.field ?? ""] ?? "--tls-cert"
                throw usage(error.message, field: flag)
            }
        }
    }

    /// The roles `--tls-client-roles` gives; none without it.
    func roles() throws -> ClientCertificateRoles {
        guard let clientRoles else { return .none }
        do { return try ClientCertificateRoles(parsing: clientRoles) } catch let error as DiscfgError { throw usage(error.message, field: "--tls-client-roles") }
    }

    /// What `--insecure` lets happen on `host`, where it does (nil elsewhere), for `serve` to warn of:
    /// plain HTTP off loopback, and callers from other machines without a credential.
    static func insecureWarning(host: String, tls: ServerTLS?, answersWithoutCredentials: Bool) -> String? {
        guard !Loopback.contains(host: host) else { return nil }
        var risks: [String] = []
        if tls == nil { risks.append("without TLS, so bearer tokens, values and secrets cross the network in clear for anyone on the path to read") }
        if answersWithoutCredentials, tls?.requiresClientCertificates != true {
            risks.append("and any machine that reaches \(host) may read and change every config without a token")
        }
        guard !risks.isEmpty else { return nil }
        return "WARNING (--insecure): serving on \(host) \(risks.joined(separator: ", "))"
    }

    /// The command's words for a server's refusal to listen on `host`.
    static func refusal(_ refusal: DiscfgServer.BindRefusal) -> DiscfgError {
        switch refusal.reason {
        case .plaintext:
            usage("refusing to serve on \(refusal.host) without TLS: bearer tokens would cross the network in clear; give --tls-cert and --tls-key, or pass --insecure", field: "--host")
        case .unauthenticated:
            usage(
                "refusing to serve on \(refusal.host) without authentication: create a token ('discfg token create --role read') and use --auth token, require client certificates (--tls-client-ca), or pass --insecure",
                field: "--host"
            )
        }
    }

    /// The command's words for the etcd API's refusal to listen on `host`.
    static func refusal(_ refusal: EtcdServer.BindRefusal) -> DiscfgError {
        switch refusal.reason {
        case .plaintext:
            usage("refusing to serve the etcd API (--etcd) on \(refusal.host) without TLS: give --tls-cert and --tls-key, or pass --insecure", field: "--etcd")
        case .unauthenticated:
            usage(
                "refusing to serve the etcd API (--etcd) on \(refusal.host) without authentication: create a token ('discfg token create --role read') and use --auth token, require client certificates (--tls-client-ca), use a loopback address, or pass --insecure",
                field: "--etcd"
            )
        }
    }
}
