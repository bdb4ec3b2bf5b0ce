import DiscfgCore
import DiscfgService

/// The roles of client certificates (mutual TLS), as `serve --tls-client-roles` gives
/// them: `CN=NAME=ROLE[@SCOPE[+SCOPE…]],…` (``AccessGrant/parse(_:entry:invalid:)``: a scope is a config, `demo`, or
/// a prefix, `demo:/app/` or `demo:etcd:/registry/`). A certificate the server's client
/// CA signed whose subject's common name is listed gets that role on those scopes
/// (everything without `@`), as a token would; one that is not listed is no credential.
///
/// A name listed more than once gets the scopes of every entry, which must all give it
/// the same role. A common name may not hold `,` (the entries' separator).
///
/// A certificate whose subject has more than one common name is refused whatever its
/// names (``refusal(for:)``): either could be the one listed, and no rule may choose.
/// The caller's name and principal are the whole subject as RFC 4514 writes it, each
/// value escaped (``CertificateSubject/description``), so that no attribute can pass
/// for another: an organisation `acme,CN=ops` reads `O=acme\,CN=ops`.
///
/// ```swift
/// let roles = try ClientCertificateRoles(parsing: "CN=deployer=write@demo,CN=ops=admin")
/// roles.caller(for: subject)   // Caller(name: "cert:CN=deployer", role: .write, scopes: [demo])
/// ```
public struct ClientCertificateRoles: Sendable, Equatable {
    /// What one common name may do: its role and scopes.
    public typealias Grant = AccessGrant

    /// The grants, by common name.
    public private(set) var grants: [String: Grant]

    /// No certificate has a role.
    public static let none = ClientCertificateRoles(grants: [:])

    /// Roles by common name.
    public init(grants: [String: Grant]) {
        self.grants = grants
    }

    /// Parses `CN=NAME=ROLE[@SCOPE[+SCOPE…]],…`.
    /// - Throws: `invalidArgument` (field `tls-client-roles`) naming the entry at fault:
    ///   a subject other than `CN=`, an unknown role, a scope that is not valid, or a
    ///   name given two roles.
    public init(parsing text: String) throws {
        var grants: [String: Grant] = [:]
        for raw in text.split(separator: ",") {
            let entry = raw.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty else { continue }
            let (name, grant) = try Self.parse(entry)
            guard let earlier = grants[name] else {
                grants[name] = grant
                continue
            }
            guard earlier.role == grant.role else {
                throw Self.invalid("CN=\(name) is given two roles (\(earlier.role.rawValue) and \(grant.role.rawValue)); give it one")
            }
            let scopes = earlier.scopes.flatMap { mine in grant.scopes.map { mine + $0.filter { !mine.contains($0) } } }
            grants[name] = Grant(role: grant.role, scopes: scopes)
        }
        self.grants = grants
    }

    /// The caller a certificate of `subject` is, or nil when its common name has no role,
    /// or it has more than one common name (which ``refusal(for:)`` refuses).
    public func caller(for subject: CertificateSubject) -> Caller? {
        guard let name = subject.commonName, let grant = grants[name] else { return nil }
        let id = subject.description
        return Caller(name: "cert:\(id)", role: grant.role, scopes: grant.scopes, principal: Principal(kind: .certificate, id: id))
    }

    /// Whether a connection may go on past its TLS handshake, for an API that serves only
    /// certificates with a role (the etcd API): its certificate must have one. Nil when no
    /// roles are given, and every certificate the client CA signed may call.
    public var handshakeAdmission: (@Sendable (CertificateSubject?) -> Bool)? {
        guard !grants.isEmpty else { return nil }
        return { [self] subject in subject.flatMap(caller(for:)) != nil }
    }

    /// Why a certificate of `subject` is refused whatever credential comes with it, or nil
    /// when it is not: with roles given, a subject of more than one common name, which
    /// the roles could match by either.
    /// - Returns: `permissionDenied` (403 on REST), field `certificate`, naming the names.
    public func refusal(for subject: CertificateSubject) -> DiscfgError? {
        guard !grants.isEmpty else { return nil }
        let names = subject.commonNames
        guard names.count > 1 else { return nil }
        return DiscfgError(
            .permissionDenied,
            "the client certificate \(subject) has \(names.count) common names (\(names.joined(separator: ", "))); roles are given by a certificate's one common name, so it is refused: issue it with a single CN",
            field: "certificate"
        )
    }

    private static func parse(_ entry: String) throws -> (String, Grant) {
        guard entry.count > 3, entry.prefix(3).uppercased() == "CN=" else {
            throw invalid("\"\(entry)\" is not CN=NAME=ROLE[@CONFIG]: a certificate is matched by its common name, e.g. CN=deployer=write@demo")
        }
        let rest = entry.dropFirst(3)
        guard let split = rest.lastIndex(of: "="), split != rest.startIndex else {
            throw invalid("\"\(entry)\" gives no role: write CN=NAME=ROLE[@CONFIG], e.g. CN=deployer=write@demo")
        }
        let name = String(rest[..<split]).trimmingCharacters(in: .whitespaces)
        return (name, try AccessGrant.parse(rest[rest.index(after: split)...], entry: entry, invalid: invalid))
    }

    private static func invalid(_ message: String) -> DiscfgError {
        DiscfgError.invalid("tls-client-roles", "--tls-client-roles: \(message)")
    }
}
