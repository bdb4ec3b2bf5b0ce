import Crypto
import DiscfgCore
import DiscfgService
import DiscfgNetwork
import DiscfgWire
import Foundation
import Hummingbird

/// Checks bearer tokens against the store's token records.
///
/// Tokens look like `dcfg_<id>_<secret>`; the store keeps only SHA-256 of the whole
/// token, looked up by id and compared in constant time. Records are cached for a
/// couple of seconds so a busy server does not read the token table on every request;
/// a revoked token stops working within that time.
public final class Authenticator: TokenAdministration {
    /// When tokens are required.
    public enum Mode: Sendable, Equatable {
        /// Nobody needs a token (loopback development, or `--insecure`).
        case open
        /// Every request needs a valid token.
        case required
        /// Open until the first token is ever issued, then required for good: revoking
        /// every token does not open it again (``TokenStore/forgetIssuedTokens()`` does).
        case onceTokensExist
    }

    public let mode: Mode
    /// Whether callers from other machines may come in without a token while the
    /// server is open (`--insecure`); otherwise only loopback peers may.
    public let openToRemotePeers: Bool
    /// The roles of client certificates by subject (mutual TLS, `--tls-client-roles`):
    /// a request that sends no bearer token is its certificate's caller, when its
    /// subject has a role.
    public let certificateRoles: ClientCertificateRoles
    /// The store's tokens as this server reads them, shared with its other faces (the
    /// etcd API's sessions); nil for a server that keeps none.
    public let tokenCache: TokenCache?
    private var store: (any TokenStore)? { tokenCache?.store }

    /// Creates an authenticator.
    /// - Parameters:
    ///   - mode: when tokens are required.
    ///   - store: where token records are; nil only with `.open`.
    ///   - cacheLifetime: how long token records are trusted before reading them again.
    ///   - openToRemotePeers: let non-loopback callers in without a token while open.
    ///   - certificateRoles: the roles of verified client certificates.
    public convenience init(
        mode: Mode, store: (any TokenStore)?, cacheLifetime: Duration = .seconds(2), openToRemotePeers: Bool = false,
        certificateRoles: ClientCertificateRoles = .none
    ) {
        self.init(
            mode: mode, tokens: store.map { TokenCache(store: $0, lifetime: cacheLifetime) }, openToRemotePeers: openToRemotePeers,
            certificateRoles: certificateRoles
        )
    }

    /// Creates an authenticator answering from `tokens`, a cache the server's other faces
    /// may share (nil only with `.open`).
    public init(mode: Mode, tokens: TokenCache?, openToRemotePeers: Bool = false, certificateRoles: ClientCertificateRoles = .none) {
        self.mode = tokens == nil ? .open : mode
        tokenCache = tokens
        self.openToRemotePeers = openToRemotePeers
        self.certificateRoles = certificateRoles
    }

    /// An authenticator that lets everyone in.
    public static let open = Authenticator(mode: .open, store: nil)

    /// Who is calling, or why the credentials are refused (401; 403 for a certificate the
    /// roles refuse), for ``Admission``: the
    /// transport's caller, the token's holder, or anonymous. Throws only when the token
    /// records cannot be read.
    func identity(_ request: Request, context: some DiscfgRequestContext) async throws -> Result<Caller, DiscfgError> {
        do {
            return .success(try await identify(request, context: context))
        } catch let error as DiscfgError where error.code == .unauthenticated || error.code == .permissionDenied {
            return .failure(error)
        }
    }

    /// Who is calling: the transport's caller, the token's holder, or anonymous.
    public func identify(_ request: Request, context: some DiscfgRequestContext) async throws -> Caller {
        if let caller = context.authenticatedCaller { return caller }
        return try await identify(authorization: request.headers[.authorization], peerIsLoopback: context.peerIsLoopback, certificate: context.peerCertificate)
    }

    /// Who is calling, from the `Authorization` header, where the caller connected from,
    /// and the client certificate its connection presented: a bearer token, when sent,
    /// names the caller (as etcd takes a token before a certificate's name); without
    /// one, a certificate whose subject has a role in ``certificateRoles``; otherwise the
    /// rules for a request without credentials. A certificate the roles refuse
    /// (``ClientCertificateRoles/refusal(for:)``) is refused whatever else is sent.
    func identify(authorization header: String?, peerIsLoopback: Bool?, certificate: CertificateSubject? = nil) async throws -> Caller {
        if let certificate, let refusal = certificateRoles.refusal(for: certificate) { throw refusal }
        if header == nil, let certificate, let caller = certificateRoles.caller(for: certificate) { return caller }
        if mode == .open { return try anonymous(peerIsLoopback: peerIsLoopback) }
        let (tokens, issued) = try await currentTokens()
        return try identify(authorization: header, peerIsLoopback: peerIsLoopback, tokens: tokens, issued: issued)
    }

    /// Who is calling, or why the credentials are refused, when the cached token records
    /// can tell without reading the store; nil otherwise (the router then reads them).
    /// The event loops' question, asked of every request they take.
    func cachedIdentity(authorization header: String?, peerIsLoopback: Bool?, certificate: CertificateSubject? = nil) -> Result<Caller, DiscfgError>? {
        if let certificate, let refusal = certificateRoles.refusal(for: certificate) { return .failure(refusal) }
        if header == nil, let certificate, let caller = certificateRoles.caller(for: certificate) { return .success(caller) }
        do {
            if mode == .open { return .success(try anonymous(peerIsLoopback: peerIsLoopback)) }
            guard let (tokens, issued) = freshTokens(at: .now) else { return nil }
            return .success(try identify(authorization: header, peerIsLoopback: peerIsLoopback, tokens: tokens, issued: issued))
        } catch let error as DiscfgError {
            return .failure(error)
        } catch {
            return nil
        }
    }

    private func identify(authorization header: String?, peerIsLoopback: Bool?, tokens: [String: AccessToken], issued: Bool) throws -> Caller {
        if mode == .onceTokensExist, !issued, header == nil { return try anonymous(peerIsLoopback: peerIsLoopback) }
        guard let header else {
            throw DiscfgError(.unauthenticated, "this server needs a bearer token: send 'Authorization: Bearer <token>' (create one with 'discfg token create')", field: "authorization")
        }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw DiscfgError(.unauthenticated, "the Authorization header must be 'Bearer <token>'", field: "authorization")
        }
        let presented = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        guard let id = TokenFormat.id(of: presented), let record = tokens[id],
              TokenFormat.constantTimeEqual(TokenFormat.hash(presented), record.hash)
        else {
            throw DiscfgError(.unauthenticated, "the bearer token is not valid (unknown, revoked or mistyped)", field: "authorization")
        }
        return Caller(
            name: "token:\(record.id)", role: record.role, scopes: record.scopes,
            principal: Principal(kind: .token, id: record.id, description: record.description)
        )
    }

    /// The anonymous caller of an open server: anyone on this machine, and others only
    /// when the server was told so. Checked on every request, whatever the bind.
    private func anonymous(peerIsLoopback: Bool?) throws -> Caller {
        guard openToRemotePeers || peerIsLoopback != false else {
            throw DiscfgError(
                .unauthenticated,
                "this server takes requests without a token only from its own machine; send 'Authorization: Bearer <token>' (create one with 'discfg token create')",
                field: "authorization"
            )
        }
        return .anonymous
    }

    // MARK: Managing tokens (`/admin/tokens`, `discfg token`)

    /// Every valid token's record, oldest first.
    /// Issues a token and keeps its record; the token itself is returned this once.
    /// It is accepted at once: the cached records are read again on the next request.
    public func issueToken(role: Role, scopes: [AccessScope]?, description: String?) async throws -> (token: String, record: TokenDocument) {
        let store = try tokenStore()
        let issued = try TokenFormat.generate(role: role, scopes: scopes, description: description, now: Date())
        try await store.saveToken(issued.record)
        tokenCache?.issued(issued.record)
        return (issued.token, TokenDocument(issued.record))
    }

    public func tokens() async throws -> [TokenDocument] {
        try await tokenStore().listTokens().map(TokenDocument.init)
    }

    /// Revokes the token with this id and returns its record; `keyNotFound` (404) when
    /// there is none. It is refused at once by this server, and by others within their
    /// cache's lifetime.
    public func revokeToken(id: String) async throws -> TokenDocument {
        let store = try tokenStore()
        guard TokenFormat.isID(id), let record = try await store.token(id: id) else {
            throw DiscfgError(.keyNotFound, "no token with id \"\(id.debugEscaped)\"; 'discfg token list' (GET /admin/tokens) lists them", field: "id")
        }
        try await store.revokeToken(id: id)
        tokenCache?.revoked(id: id)
        return TokenDocument(record)
    }

    private func tokenStore() throws -> any TokenStore {
        guard let store else {
            throw DiscfgError(.invalidArgument, "this server keeps no tokens: it was started open, over a store without them", field: "tokens")
        }
        return store
    }

    /// The cached token records, if read within the cache's lifetime.
    private func freshTokens(at now: ContinuousClock.Instant) -> ([String: AccessToken], Bool)? {
        tokenCache?.fresh(at: now).map { ($0.tokens, $0.issued) }
    }

    /// Valid tokens by id, and whether any was ever issued.
    func currentTokens() async throws -> ([String: AccessToken], Bool) {
        guard let tokenCache else { return ([:], false) }
        let reading = try await tokenCache.current()
        return (reading.tokens, reading.issued)
    }
}

/// How bearer tokens are made, parsed and hashed.
public enum TokenFormat {
    static let prefix = "dcfg_"
    static let idLength = 12

    /// The longest description a token may carry.
    public static let maxDescriptionLength = 500

    /// A new token and its record: `dcfg_<12 hex id>_<43 base64url secret>`.
    /// - Throws: `invalidArgument` for a description that is too long or holds control
    ///   characters, which would garble `token list`.
    public static func generate(role: Role, configs: [ConfigName]?, description: String?, now: Date) throws -> (token: String, record: AccessToken) {
        try generate(role: role, scopes: configs?.map { AccessScope(config: $0) }, description: description, now: now)
    }

    /// A new token reaching `scopes` (nil for everything) and its record.
    /// - Throws: as ``generate(role:configs:description:now:)``, and `invalidArgument` on
    ///   field `scopes` for an empty list (a token that could touch nothing).
    public static func generate(role: Role, scopes: [AccessScope]?, description: String?, now: Date) throws -> (token: String, record: AccessToken) {
        if scopes?.isEmpty == true {
            throw DiscfgError.invalid("scopes", "scopes is empty, so the token could touch nothing; leave it out for every config")
        }
        if let description {
            guard description.unicodeScalars.count <= maxDescriptionLength else {
                throw DiscfgError.invalid("description", "a token's description is longer than \(maxDescriptionLength) characters")
            }
            if let bad = description.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
                throw DiscfgError.invalid("description", "a token's description contains the control character \"\(String(bad).debugEscaped)\"")
            }
        }
        var generator = SystemRandomNumberGenerator()
        let idBytes = (0..<(idLength / 2)).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let secretBytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let id = idBytes.map { String(format: "%02x", $0) }.joined()
        let secret = Data(secretBytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let token = prefix + id + "_" + secret
        return (token, AccessToken(id: id, hash: hash(token), role: role, scopes: scopes, description: description, createdAt: now))
    }

    /// Whether `text` has the form of a token's id (12 lowercase hex digits).
    static func isID(_ text: String) -> Bool {
        text.utf8.count == idLength && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The id part of a well-formed token, or nil.
    public static func id(of token: String) -> String? {
        guard token.hasPrefix(prefix) else { return nil }
        let rest = token.dropFirst(prefix.count)
        guard rest.count > idLength + 1, rest[rest.index(rest.startIndex, offsetBy: idLength)] == "_" else { return nil }
        let id = rest.prefix(idLength)
        guard id.allSatisfy(\.isHexDigit) else { return nil }
        return String(id)
    }

    /// SHA-256 of the token's text.
    public static func hash(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }

    /// Compares two hashes without stopping at the first difference.
    static func constantTimeEqual(_ lhs: Data, _ rhs: Data) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}
