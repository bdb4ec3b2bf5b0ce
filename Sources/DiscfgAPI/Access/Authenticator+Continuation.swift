import DiscfgCore
import DiscfgService

extension Authenticator {
    /// How often a long-lived request (a watch's stream or long poll) asks whether its
    /// caller may still go on: as often as the token records are read again.
    static let continuationInterval = Duration.seconds(2)

    /// Whether `caller`'s admission can end while its request lasts: a token's holder
    /// (the token can be revoked or changed), or the anonymous caller of a server that is
    /// open only until the first token is issued. A certificate's roles and an IAM
    /// caller's are fixed for the request's life.
    func admissionMayEnd(_ caller: Caller) -> Bool {
        switch caller.principal.kind {
        case .token: true
        case .anonymous: mode == .onceTokensExist
        case .iam, .certificate, .local, .system: false
        }
    }

    /// Why `caller`, admitted when its request began, may not go on now, or nil while it
    /// may: its token was revoked (or no longer has the role and scopes it was admitted
    /// with), or tokens are now required of an anonymous caller. Never fails open: while
    /// the token records cannot be read, that is the reason.
    func refusalToContinue(_ caller: Caller) async -> DiscfgError? {
        guard admissionMayEnd(caller) else { return nil }
        let tokens: [String: AccessToken], issued: Bool
        do {
            (tokens, issued) = try await currentTokens()
        } catch {
            return DiscfgError(.unavailable, "this request's credentials could not be checked again (the token records did not answer); reconnect", field: "authorization")
        }
        if caller.principal.kind == .anonymous {
            guard issued else { return nil }
            return DiscfgError(.unauthenticated, "this server now needs a bearer token: send 'Authorization: Bearer <token>' and reconnect", field: "authorization")
        }
        guard let record = tokens[caller.principal.id], record.role == caller.role, record.scopes == caller.scopes else {
            return DiscfgError(.unauthenticated, "the bearer token this request was made with was revoked", field: "authorization")
        }
        return nil
    }

    /// Waits until `caller` may no longer go on, asking every ``continuationInterval``,
    /// and returns why; nil once the task is cancelled (the request ended first), and at
    /// once nil for a caller whose admission cannot end.
    func endOfAdmission(_ caller: Caller) async -> DiscfgError? {
        guard admissionMayEnd(caller) else {
            // Nothing to wait for: sleep until the request ends.
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return nil
        }
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: Self.continuationInterval)
            } catch {
                return nil
            }
            if let refusal = await refusalToContinue(caller) { return refusal }
        }
        return nil
    }
}
