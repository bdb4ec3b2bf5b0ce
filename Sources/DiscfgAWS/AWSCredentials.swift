import Foundation

/// An AWS access key pair, optionally temporary (session token plus expiry).
///
/// The description redacts the secret and the token so credentials can be logged by accident
/// without leaking.
public struct AWSCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The access key ID (`AKIA…` or `ASIA…`).
    public var accessKeyID: String
    /// The secret access key; used only to derive signing keys.
    public var secretAccessKey: String
    /// The session token of temporary credentials, sent as `X-Amz-Security-Token`.
    public var sessionToken: String?
    /// When temporary credentials stop working; nil for long-term keys.
    public var expiration: Date?

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, expiration: Date? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }

    /// True when the credentials expire within `margin` of `now` and so should be refreshed.
    public func needsRefresh(at now: Date, margin: TimeInterval) -> Bool {
        guard let expiration else { return false }
        return now.addingTimeInterval(margin) >= expiration
    }

    /// A redacted rendering: the key ID, whether a token is present, and the expiry.
    public var description: String {
        var text = "AWSCredentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>"
        if sessionToken != nil { text += ", sessionToken: <redacted>" }
        if let expiration { text += ", expiration: \(expiration)" }
        return text + ")"
    }
}
