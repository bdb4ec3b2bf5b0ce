import AsyncHTTPClient
import DiscfgAWS
import Foundation
import NIOCore
import NIOHTTP1

/// Reads a deployment's health URL (`--rollback-on http:URL`): one `GET`, healthy when
/// it answers 2xx, unhealthy otherwise, with the status or the transport's failure in
/// one sentence.
///
/// The probe wants the status alone: it never reads the answer's body (a health page
/// of 100 MB costs nothing but its head), follows a redirect only to the same scheme,
/// host and port (a redirect elsewhere is an answer of its own, not followed: a health
/// URL that points at another host is a misconfiguration, or someone else's page), and
/// every probe ends by its timeout, redirects included, however slow or silent the
/// server.
///
/// ```swift
/// let probe = HealthProbe()
/// await probe.read("https://shop.example/health")   // .healthy, or .unhealthy("the health URL … answered 503")
/// ```
public final class HealthProbe: Sendable {
    /// How long a probe may take, and how many redirects it follows.
    public struct Configuration: Sendable {
        /// The whole probe's deadline, every redirect included.
        public var timeout: Duration
        /// Redirects to the same origin followed before the answer counts as unhealthy.
        public var maxRedirects: Int

        /// Creates a configuration: 5 s and 3 redirects unless told otherwise.
        public init(timeout: Duration = .seconds(5), maxRedirects: Int = 3) {
            self.timeout = timeout
            self.maxRedirects = max(0, maxRedirects)
        }
    }

    /// The settings this probe was created with.
    public let configuration: Configuration
    private let httpClient: HTTPClient

    /// Creates a probe and its connection pool; call ``shutdown()`` when done.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        var settings = HTTPClient.Configuration()
        settings.redirectConfiguration = .disallow
        settings.timeout.connect = TimeAmount(min(configuration.timeout, .seconds(5)))
        // A refused connection fails its probe at once instead of being tried until the connect timeout.
        settings.connectionPool.retryConnectionEstablishment = false
        settings.decompression = .disabled
        httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
    }

    /// Closes the connection pool.
    public func shutdown() async throws {
        try await httpClient.shutdown()
    }

    deinit {
        httpClient.shutdown { _ in }
    }

    /// Probes `url`: ``SignalReading/healthy`` for a 2xx answer, else
    /// ``SignalReading/unhealthy(_:)`` naming the URL and what it answered or why it did not;
    /// ``SignalReading/unknown(_:)`` when the probe's task was cancelled before it knew (a
    /// server shutting down must not read as an unhealthy URL).
    public func read(_ url: String) async -> SignalReading {
        let reading = await probe(url)
        if Task.isCancelled, reading != .healthy {
            return .unknown("the health URL \(Self.shown(url)) was not read: the reading was cancelled")
        }
        return reading
    }

    private func probe(_ url: String) async -> SignalReading {
        guard let start = URL(string: url), let scheme = start.scheme?.lowercased(), ["http", "https"].contains(scheme), start.host != nil else {
            return .unhealthy("the health URL \(Self.shown(url)) is not an http:// or https:// URL with a host")
        }
        let cutoff = ContinuousClock.now + configuration.timeout
        let timeout = configuration.timeout
        return await withTaskGroup(of: SignalReading?.self) { group in
            group.addTask { await self.follow(start, until: cutoff) }
            group.addTask {
                // The probe's own deadline, whatever the HTTP client does with its own.
                try? await Task.sleep(until: cutoff, clock: .continuous)
                return Task.isCancelled ? nil : .unhealthy("the health URL \(Self.shown(url)) did not answer within \(Self.words(timeout))")
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let reading = next { return reading }
            }
            return .unhealthy("the health URL \(Self.shown(url)) did not answer within \(Self.words(timeout))")
        }
    }

    /// The probe of `start` and the same-origin redirects it answers with.
    private func follow(_ start: URL, until cutoff: ContinuousClock.Instant) async -> SignalReading {
        let shown = Self.shown(start.absoluteString)
        var url = start
        for _ in 0...configuration.maxRedirects {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .GET
            request.headers.add(name: "User-Agent", value: "discfg")
            request.headers.add(name: "Accept", value: "*/*")
            let response: HTTPClientResponse
            do {
                response = try await httpClient.execute(request, deadline: NIODeadline.now() + TimeAmount(cutoff - ContinuousClock.now))
            } catch {
                if let failure = ConnectFailure(error, endpoint: url) {
                    return .unhealthy("the health URL \(shown) could not be reached: \(failure.words)")
                }
                if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout {
                    return .unhealthy("the health URL \(shown) did not answer within \(Self.words(configuration.timeout))")
                }
                return .unhealthy("the health URL \(shown) could not be read: \(describeTransportError(error))")
            }
            // The body is not read: dropping it closes the connection, whatever its size.
            let status = Int(response.status.code)
            if (200..<300).contains(status) { return .healthy }
            guard [301, 302, 303, 307, 308].contains(status) else {
                return .unhealthy("the health URL \(shown) answered \(status) \(response.status.reasonPhrase)")
            }
            guard let location = response.headers.first(name: "Location"), let next = URL(string: location, relativeTo: url)?.absoluteURL else {
                return .unhealthy("the health URL \(shown) answered \(status) without a Location to follow")
            }
            guard Self.origin(next) == Self.origin(url) else {
                return .unhealthy("the health URL \(shown) answered \(status), a redirect to \(Self.shown(next.absoluteString)) on another origin, which is not followed")
            }
            url = next
        }
        return .unhealthy("the health URL \(shown) redirected more than \(configuration.maxRedirects) times")
    }

    /// Scheme, host and port (the scheme's default when none is given), in lowercase.
    static func origin(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// A URL as a message shows it: quoted, at most 200 characters.
    static func shown(_ url: String) -> String {
        "\"\(url.prefix(200))\(url.count > 200 ? "…" : "")\""
    }

    /// `5 s`, `250 ms`.
    static func words(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}
