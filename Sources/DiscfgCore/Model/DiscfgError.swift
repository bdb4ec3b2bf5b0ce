import Foundation

/// A failure a person can act on: what went wrong, in which field, and (for a failed
/// condition) the item as it is now.
///
/// Errors are data. Faces map ``Code`` to an HTTP status or a CLI exit code at the edge;
/// stores and the core only say what happened.
///
/// ```swift
/// throw DiscfgError(.invalidArgument, "key must not contain \"..\"", field: "key")
/// ```
public struct DiscfgError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        /// A name, key, value, flag or request is malformed.
        case invalidArgument
        /// The named configuration does not exist.
        case configNotFound
        /// The key does not exist (or has expired).
        case keyNotFound
        /// A configuration with that name already exists.
        case configExists
        /// A compare-and-swap condition did not hold; nothing was changed.
        case conditionFailed
        /// A value or request body is over its size limit.
        case tooLarge
        /// The change would take the config's live bytes (key paths and values) past
        /// its quota (``ConfigSettings/quotaBytes``); nothing was changed. Deletes and
        /// changes that shrink the config always pass. Also a change that writes a key
        /// while the config's NOSPACE alarm is raised (``ConfigAlarm/noSpace``, field
        /// `alarms`), whatever its size, until the alarm is disarmed.
        case quotaExceeded
        /// The requested revision is older than the retained history.
        case compacted
        /// A JSON Pointer (`?path`, `--path`) names nothing in the key's value.
        case pathNotFound
        /// A patch does not apply to the key's value: a `test` failed, a path it names
        /// does not exist, or the value is not JSON. Nothing was changed.
        case patchFailed
        /// The request's body is in a media type this operation does not take (a
        /// `PATCH` that is neither a merge patch nor a JSON patch).
        case unsupportedMediaType
        /// The change would leave a value, or a prefix's document, that its JSON Schema
        /// refuses; ``DiscfgError/violations`` lists each. Nothing was changed.
        case schemaViolation
        /// What the config holds cannot be written in the format asked for (binary
        /// values, control characters or clashing names in env output).
        case notRepresentable
        /// The store is a read-only copy (`discfg agent`): changes go to the store it
        /// copies, which the message names. Nothing was changed.
        case readOnly
        /// No credentials were presented.
        case unauthenticated
        /// The credentials may not do this.
        case permissionDenied
        /// The backing store is throttling requests.
        case throttled
        /// The backing store cannot be reached or failed.
        case unavailable
        /// A fault inside discfg; never caused by input.
        case `internal`
    }

    /// What kind of failure this is.
    public var code: Code
    /// One sentence a person can act on.
    public var message: String
    /// The offending input, e.g. `key`, `value`, `--ttl`.
    public var field: String?
    /// For ``Code/conditionFailed``: the item as it is now (nil when absent).
    public var currentItem: Item?
    /// For ``Code/schemaViolation``: every violation found, in key order.
    public var violations: [SchemaViolation]
    /// For a failure of the server or its store told to a caller in general terms: the
    /// id of the log line that has the details (the server's failure policy sets it).
    public var correlationID: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, field: String? = nil, currentItem: Item? = nil, violations: [SchemaViolation] = []) {
        self.code = code
        self.message = message
        self.field = field
        self.currentItem = currentItem
        self.violations = violations
    }

    public var description: String { message }
}

extension DiscfgError {
    /// Bad input in `field`: code `invalidArgument`.
    public static func invalid(_ field: String, _ message: String) -> DiscfgError {
        DiscfgError(.invalidArgument, message, field: field)
    }

    /// The configuration `name` does not exist.
    public static func configNotFound(_ name: ConfigName) -> DiscfgError {
        DiscfgError(.configNotFound, "config \"\(name)\" does not exist (create it with `discfg create \(name)`)", field: "config")
    }

    /// The key does not exist in the configuration (at `revision`, when one was asked for).
    public static func keyNotFound(_ key: Key, in config: ConfigName, atRevision revision: Revision? = nil) -> DiscfgError {
        DiscfgError(.keyNotFound, "key \"\(key)\" not found in config \"\(config)\"\(revision.map { " at revision \($0)" } ?? "")", field: "key")
    }

    /// A change refused because it would take `config` to `size` bytes, past its quota.
    public static func quotaExceeded(_ config: ConfigName, quota: Int, size: Int) -> DiscfgError {
        DiscfgError(
            .quotaExceeded,
            "config \"\(config)\" may hold \(quota) bytes of key paths and values (its quota) and this change would make them \(size) bytes, so nothing was changed: delete keys, or raise the quota (`discfg update \(config) --quota SIZE`)",
            field: "quotaBytes"
        )
    }

    /// A read at a revision the config has not reached.
    public static func futureRevision(_ revision: Revision, current: Revision) -> DiscfgError {
        .invalid("revision", "revision \(revision) is in the future; the config is at revision \(current)")
    }

    /// A read at (or from) a revision whose history is gone.
    public static func compacted(_ revision: Revision, through compacted: Revision, field: String = "revision") -> DiscfgError {
        DiscfgError(.compacted, "revision \(revision) is older than the retained history (compacted through revision \(compacted))", field: field)
    }
}
