import AsyncHTTPClient
import DiscfgCore
import DiscfgSecrets
import Foundation

/// The library applications use to read their configuration from a discfg server.
///
/// ```swift
/// let client = try ConfigClient(url: URL(string: "http://127.0.0.1:8899")!, token: ProcessInfo.processInfo.environment["DISCFG_TOKEN"])
/// let cfg = try await client.config("myapp")
/// let host = try await cfg.string("/db/host") ?? "localhost"
/// let port = try await cfg.int("/db/port") ?? 5432
/// struct Limits: Decodable { var rps: Int }
/// let limits = try await cfg.decode("/limits", as: Limits.self)
/// let dbPort = try await cfg.decode("/settings", at: "/db/port", as: Int.self)   // a part of a JSON value
/// _ = try await client.store.patch(try Key("/settings"), .merge(["db": ["port": 5433]]), in: cfg.name, conditions: [])
/// try await cfg.followChanges()           // keep every key fresh from now on
/// ```
///
/// Secrets (`discfg set --secret`) reach the application sealed; a client made with
/// `keys` opens them in the process (a local key file, or KMS through the AWS credential
/// chain), and reads return the value as it was set:
///
/// ```swift
/// let client = try ConfigClient(url: url, keys: StandardKeyResolver(environment: ProcessInfo.processInfo.environment))
/// let password = try await client.config("myapp").string("/db/password")
/// ```
public final class ConfigClient: Sendable {
    /// The store every config handle reads through.
    public let store: RemoteStore
    /// Opens secrets with the keys the client was made with; nil without keys.
    public let keyring: SecretKeyring?

    /// Connects to a discfg server.
    /// - Parameters:
    ///   - url: the server, e.g. `http://127.0.0.1:8899`.
    ///   - token: a bearer token, when the server needs one.
    ///   - keys: where the keys that open secrets come from; without it, reading a
    ///     secret throws.
    ///   - tls: over `https://`, the CA to trust (a private one) and the client
    ///     certificate to present; nil for the system's CAs and no certificate
    ///     (`ClientTLS(environment:)` reads `DISCFG_CACERT`, `DISCFG_CERT`, `DISCFG_KEY`).
    public init(url: URL, token: String? = nil, client: HTTPClient? = nil, keys: (any KeyResolver)? = nil, tls: ClientTLS? = nil) throws {
        store = try RemoteStore(url: url, token: token, client: client, tls: tls)
        keyring = keys.map(SecretKeyring.init(resolver:))
    }

    /// A handle on one config; throws `configNotFound` when the server has no such config.
    /// - Parameters:
    ///   - maxAge: how long a value read once is served from memory before it is read
    ///     again (ignored while following changes, when the cache is always current).
    ///   - flagTelemetry: where the config's flag evaluations are counted and traced; by
    ///     default the bootstrapped swift-metrics and tracing backends.
    ///   - entity: who the reads are for (a user, a host): a staged deployment's candidate is
    ///     read where the deployment exposes it, computed here from the deployment's record;
    ///     nil reads the stable version until a deployment completes.
    ///   - healthInterval: how often the requests the application reports
    ///     (``RemoteConfig/recordRequest(failed:)``) are sent to the server, at most.
    /// - Throws: `invalidArgument` for a name, an entity or an interval that is not one;
    ///   `configNotFound`.
    public func config(
        _ name: String, maxAge: Duration = .seconds(30), flagTelemetry: FlagTelemetry = FlagTelemetry(), entity: String? = nil,
        healthInterval: Duration = .seconds(5)
    ) async throws -> RemoteConfig {
        let name = try ConfigName(name)
        let entity = try entity.map { try DeploymentEntity.checked($0, field: "entity") }
        guard healthInterval > .zero else {
            throw DiscfgError.invalid("healthInterval", "healthInterval is how often health reports are sent; it must be more than zero, not \(healthInterval)")
        }
        _ = try await store.configInfo(name)
        return RemoteConfig(
            store: store, name: name, maxAge: maxAge, keyring: keyring, flagTelemetry: flagTelemetry, entity: entity, healthInterval: healthInterval
        )
    }
}
