import Foundation

/// Who made a change: resolved where the request was authenticated, never taken from
/// what the request says about itself.
public struct Principal: Hashable, Sendable, Codable {
    /// How the principal was authenticated.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// A discfg bearer token: `id` is the token's id, `description` its description.
        case token
        /// An IAM caller behind API Gateway: `id` is its ARN.
        case iam
        /// A TLS client certificate: `id` is its subject.
        case certificate
        /// A command on this machine over the embedded store: `id` is `user@host`.
        case local
        /// A caller on a server without authentication (an open loopback server, the
        /// etcd API without auth): `id` says which face.
        case anonymous
        /// discfg itself, such as a TTL running out.
        case system
    }

    /// How the principal was authenticated.
    public var kind: Kind
    /// The principal's stable name within its kind: a token id, an ARN, a subject.
    public var id: String
    /// What a person reads beside the id, such as a token's description.
    public var description: String?

    /// Creates a principal.
    public init(kind: Kind, id: String, description: String? = nil) {
        self.kind = kind
        self.id = id
        self.description = description?.isEmpty == true ? nil : description
    }

    /// The user and host running this process, for a command over the embedded store.
    public static func localUser(environment: [String: String] = ProcessInfo.processInfo.environment) -> Principal {
        let user = environment["USER"] ?? environment["LOGNAME"] ?? NSUserName()
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "localhost"
        return Principal(kind: .local, id: "\(user)@\(host)")
    }

    /// The name a person reads: the description when there is one, else `kind:id`.
    public var displayName: String {
        if let description { return description }
        return "\(kind.rawValue):\(id)"
    }

    /// `kind:id`, the form `discfg log --by` matches besides the description.
    public var qualifiedID: String { "\(kind.rawValue):\(id)" }
}

/// Who made a change and why, recorded with it in the same transaction.
///
/// A face sets it for the changes it makes on a caller's behalf with
/// ``withValue(_:operation:)``; a store reads ``current`` as it starts a change and
/// writes it with every event of that change. Changes made with none are recorded
/// without attribution, as changes from before it existed read back.
///
/// ```swift
/// let who = Attribution(principal: .localUser(), message: "move to the new primary")
/// try await who.withValue { try await store.set(key, to: value, in: app) }
/// ```
public struct Attribution: Hashable, Sendable {
    /// The most bytes of UTF-8 a change's message may hold.
    public static let maxMessageBytes = 1024

    /// Who made the change.
    public var principal: Principal
    /// Why, in the words of whoever made it; nil when they gave none.
    public var message: String?

    /// Creates an attribution; an empty message is no message.
    public init(principal: Principal, message: String? = nil) {
        self.principal = principal
        self.message = message?.isEmpty == true ? nil : message
    }

    /// What discfg records for a key whose TTL ran out.
    public static let expiry = Attribution(principal: Principal(kind: .system, id: "ttl", description: "TTL expiry"))

    /// The attribution of the changes made by the current task.
    @TaskLocal public static var current: Attribution?

    /// `given` (a transaction's own, ``Transaction/attribution``) or else ``current``,
    /// checked, for a store starting a change: a message too long is refused before
    /// anything is written.
    public static func forChange(_ given: Attribution? = nil) throws -> Attribution? {
        let attribution = given ?? current
        try attribution?.validate()
        return attribution
    }

    /// Runs `operation` with this attribution as ``current``.
    public func withValue<T>(operation: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(self, operation: operation)
    }

    /// Runs `operation` with `message`, a document's own (a transaction's or an
    /// import's `message`), as ``current``'s message when it has none: a message given
    /// beside the document (a header, `-m`) wins.
    public static func documented<T>(_ message: String?, operation: () async throws -> T) async rethrows -> T {
        guard let message, var attribution = current, attribution.message == nil else { return try await operation() }
        attribution.message = message
        return try await attribution.withValue(operation: operation)
    }

    /// Refuses a message longer than ``maxMessageBytes`` or holding control characters
    /// other than newline and tab.
    public func validate() throws {
        if let message { try Self.validate(message: message) }
    }

    /// Refuses a message longer than ``maxMessageBytes`` or holding control characters
    /// other than newline and tab; nothing is changed by a request that carries one.
    public static func validate(message: String) throws {
        let bytes = message.utf8.count
        guard bytes <= maxMessageBytes else {
            throw DiscfgError(
                .tooLarge,
                "the change's message is \(bytes) bytes; the most is \(maxMessageBytes) (\(ByteSize.text(maxMessageBytes))): shorten it, nothing was changed",
                field: "message"
            )
        }
        guard !message.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) else {
            throw DiscfgError.invalid("message", "the change's message holds a control character; only text, newlines and tabs are kept")
        }
    }
}
