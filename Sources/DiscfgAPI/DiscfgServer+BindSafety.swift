import DiscfgCore
import DiscfgNetwork

extension DiscfgServer {
    /// Why a server does not start: it would listen off loopback and answer callers
    /// without a token.
    public struct BindRefusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The address it was to listen on.
        public let host: String

        public var description: String {
            "refusing to serve on \(host) without authentication: require bearer tokens (and create one), or let other machines in without one on purpose (the authenticator's openToRemotePeers)"
        }
    }

    /// Throws ``BindRefusal`` when `host` is not loopback and the server would answer
    /// without a token (its authenticator is open, or open until a first token is
    /// created and none has been), unless the authenticator lets other machines in so on
    /// purpose (``Authenticator/openToRemotePeers``, `serve --insecure`).
    ///
    /// Every application ``makeApplication(store:authenticator:configuration:logger:onServerRunning:services:)``
    /// makes checks it before it listens; a caller may check sooner.
    public static func checkBindSafety(host: String, authenticator: Authenticator) async throws {
        guard !Loopback.contains(host: host), !authenticator.openToRemotePeers else { return }
        if try await authenticator.answersWithoutToken() { throw BindRefusal(host: host) }
    }
}

extension Authenticator {
    /// Whether a caller on this machine gets in without a token now.
    func answersWithoutToken() async throws -> Bool {
        do {
            _ = try await identify(authorization: nil, peerIsLoopback: true)
            return true
        } catch let error as DiscfgError where error.code == .unauthenticated {
            return false
        }
    }
}
