import AsyncHTTPClient
import Foundation

/// No source in a ``CredentialChain`` produced credentials.
public struct CredentialChainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One source that was asked and why it produced nothing.
    public struct Attempt: Sendable, Hashable {
        /// The provider's name.
        public let source: String
        /// Its explanation.
        public let reason: String
    }

    /// Every source in chain order.
    public let attempts: [Attempt]

    /// A multi-line report, one source per line, so the operator sees which setting to fix.
    public var description: String {
        "no AWS credentials found; tried, in order:\n"
            + attempts.map { "  - \($0.source): \($0.reason)" }.joined(separator: "\n")
    }
}

/// Resolves credentials from an ordered list of sources and caches them until shortly before expiry.
///
/// An actor because the cache and the in-flight refresh are shared: when many discfg requests find
/// the credentials stale at once, they all wait on a single refresh instead of each calling the
/// metadata endpoint.
public actor CredentialChain: CredentialProvider {
    /// The sources, asked in order; the first to answer wins.
    public let providers: [any CredentialProvider]
    /// How long before expiry temporary credentials are refreshed.
    public let refreshMargin: TimeInterval
    private let now: @Sendable () -> Date
    private var cached: AWSCredentials?
    private var cachedSource: String?
    private var inFlight: Task<(AWSCredentials, String), any Error>?
    private var resolutions = 0

    /// The name shown when a chain is nested in another chain.
    public nonisolated var name: String { "credential chain" }

    /// Creates a chain over `providers`.
    ///
    /// - Parameters:
    ///   - providers: Sources in priority order.
    ///   - refreshMargin: Seconds before expiry at which credentials count as stale (5 minutes by default).
    ///   - now: The clock, injectable so tests can move time instead of sleeping.
    public init(
        providers: [any CredentialProvider],
        refreshMargin: TimeInterval = 300,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.providers = providers
        self.refreshMargin = refreshMargin
        self.now = now
    }

    /// The standard discfg order: explicit → environment → shared files → container endpoint → IMDSv2.
    ///
    /// - Parameters:
    ///   - explicit: Credentials from flags, if any.
    ///   - environment: The environment every source reads (injected for tests).
    ///   - profile: A profile overriding `AWS_PROFILE`.
    ///   - httpClient: The client the endpoint-based sources use.
    ///   - refreshMargin: See ``init(providers:refreshMargin:now:)``.
    ///   - now: See ``init(providers:refreshMargin:now:)``.
    public static func standard(
        explicit: AWSCredentials? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        profile: String? = nil,
        httpClient: HTTPClient = .shared,
        refreshMargin: TimeInterval = 300,
        now: @escaping @Sendable () -> Date = { Date() }
    ) -> CredentialChain {
        let first: any CredentialProvider = explicit.map { StaticCredentialProvider($0) }
            ?? UnavailableCredentialProvider(name: "explicit credentials", reason: "none given on the command line")
        return CredentialChain(
            providers: [
                first,
                EnvironmentCredentialProvider(environment: environment),
                SharedFileCredentialProvider(environment: environment, profile: profile),
                ContainerCredentialProvider(environment: environment, httpClient: httpClient),
                InstanceMetadataCredentialProvider(environment: environment, httpClient: httpClient),
            ],
            refreshMargin: refreshMargin,
            now: now
        )
    }

    /// Cached credentials when still fresh; otherwise one shared walk of the chain.
    public func credentials() async throws -> AWSCredentials {
        let instant = now()
        if let cached, !cached.needsRefresh(at: instant, margin: refreshMargin) {
            return cached
        }
        let task: Task<(AWSCredentials, String), any Error>
        if let inFlight {
            task = inFlight
        } else {
            let providers = self.providers
            task = Task { try await Self.walk(providers) }
            inFlight = task
            resolutions += 1
        }
        do {
            let (credentials, source) = try await task.value
            if inFlight == task { inFlight = nil }
            cached = credentials
            cachedSource = source
            return credentials
        } catch {
            if inFlight == task { inFlight = nil }
            // A failed refresh must not break requests while the old credentials still work.
            if let cached, let expiration = cached.expiration, now() < expiration {
                return cached
            }
            throw error
        }
    }

    /// The name of the source that produced the cached credentials, for diagnostics.
    public var currentSource: String? { cachedSource }

    /// How many times the chain was walked (first fetch plus refreshes); lets tests prove sharing.
    public var resolutionCount: Int { resolutions }

    /// Drops the cache so the next call walks the chain again, e.g. after an expired-token error.
    @discardableResult
    public func invalidate() -> Bool {
        cached = nil
        cachedSource = nil
        return true
    }

    private static func walk(_ providers: [any CredentialProvider]) async throws -> (AWSCredentials, String) {
        var attempts: [CredentialChainError.Attempt] = []
        for provider in providers {
            do {
                return (try await provider.credentials(), provider.name)
            } catch let error as CredentialProviderError {
                attempts.append(.init(source: provider.name, reason: error.reason))
            } catch let error as CredentialChainError {
                attempts.append(contentsOf: error.attempts)
            } catch {
                attempts.append(.init(source: provider.name, reason: String(describing: error)))
            }
        }
        throw CredentialChainError(attempts: attempts)
    }
}

/// A placeholder for a source that is known to be absent, so the chain's report still mentions it.
struct UnavailableCredentialProvider: CredentialProvider {
    let name: String
    let reason: String

    func credentials() async throws -> AWSCredentials {
        throw CredentialProviderError(.notConfigured, reason)
    }
}
