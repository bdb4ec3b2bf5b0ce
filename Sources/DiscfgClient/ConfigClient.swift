import AsyncHTTPClient
import DiscfgCore
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
/// try await cfg.followChanges()           // keep every key fresh from now on
/// ```
public final class ConfigClient: Sendable {
    /// The store every config handle reads through.
    public let store: RemoteStore

    /// Connects to a discfg server.
    /// - Parameters:
    ///   - url: the server, e.g. `http://127.0.0.1:8899`.
    ///   - token: a bearer token, when the server needs one.
    public init(url: URL, token: String? = nil, client: HTTPClient? = nil) throws {
        store = try RemoteStore(url: url, token: token, client: client)
    }

    /// A handle on one config; throws `configNotFound` when the server has no such config.
    /// - Parameter maxAge: how long a value read once is served from memory before it is
    ///   read again (ignored while following changes, when the cache is always current).
    public func config(_ name: String, maxAge: Duration = .seconds(30)) async throws -> RemoteConfig {
        let name = try ConfigName(name)
        _ = try await store.configInfo(name)
        return RemoteConfig(store: store, name: name, maxAge: maxAge)
    }
}
