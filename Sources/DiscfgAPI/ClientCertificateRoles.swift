import DiscfgCore
import DiscfgNetwork

/// The roles of client certificates (mutual TLS), as `serve --tls-client-roles` gives
/// them: `CN=NAME=ROLE[@SCOPE[+SCOPE…]],…` (``AccessGrant/parse(_:entry:invalid:)``: a scope is a config, `demo`, or
/// a prefix, `demo:/app/` or `demo:etcd:/registry/`). A certificate the server's client
/// CA signed whose subject's common name is listed gets that role on those scopes
/// (everything without `@`), as a token would; one that is not listed is no credential.
///
/// A name listed more than once gets the scopes of every entry, which must all give it
/// the same role. A common name may not hold `,` (the entries' separator).
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

    /// The caller a certificate of `subject` is, or nil when its common name has no role.
    public func caller(for subject: CertificateSubject) -> Caller? {
        guard let name = subject.commonName, let grant = grants[name] else { return nil }
        let id = subject.description
        return Caller(name: "cert:\(id)", role: grant.role, scopes: grant.scopes, principal: Principal(kind: .certificate, id: id))
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
