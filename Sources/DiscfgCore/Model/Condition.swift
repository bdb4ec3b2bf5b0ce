import Foundation

/// A compare-and-swap guard on a set or delete. A change with conditions happens only
/// if every one of them holds; otherwise nothing changes and the current item is
/// returned in a ``DiscfgError/Code/conditionFailed`` error.
public enum Condition: Hashable, Sendable {
    /// The key's version is exactly N; `0` means the key must not exist.
    case version(UInt64)
    /// The key was last written at exactly this revision (an HTTP `ETag`).
    case modRevision(Revision)
    /// The key's value is exactly these bytes (the original's `--condition`).
    case value(Data)
    /// The key exists, whatever its value.
    case exists

    /// Whether the condition holds for `current` (nil when the key is absent or expired).
    public func holds(for current: Item?) -> Bool {
        switch self {
        case .version(0): current == nil
        case .version(let version): current?.version == version
        case .modRevision(let revision): current?.modRevision == revision
        case .value(let value): current?.value == value
        case .exists: current != nil
        }
    }

    /// The condition as a transaction's comparison on `key`.
    public func comparison(_ key: Key) -> Comparison {
        switch self {
        case .version(let version): Comparison(.key(key), .equal, .version(version))
        case .modRevision(let revision): Comparison(.key(key), .equal, .modRevision(revision))
        case .value(let value): Comparison(.key(key), .equal, .value(value))
        case .exists: Comparison(.key(key), .equal, .exists(true))
        }
    }

    /// Why the condition failed, in one phrase, e.g. `version is 2, expected 1`.
    public func explainFailure(for current: Item?) -> String {
        switch self {
        case .version(0):
            "key already exists (version \(current?.version ?? 0))"
        case .version(let version):
            current.map { "version is \($0.version), expected \(version)" } ?? "key does not exist, expected version \(version)"
        case .modRevision(let revision):
            current.map { "modRevision is \($0.modRevision), expected \(revision)" } ?? "key does not exist, expected modRevision \(revision)"
        case .value:
            current == nil ? "key does not exist, expected a value" : "value differs from the expected value"
        case .exists:
            "key does not exist"
        }
    }
}

extension Array where Element == Condition {
    /// Throws `conditionFailed` carrying `current` when any condition does not hold.
    public func check(against current: Item?, key: Key) throws {
        if let failed = first(where: { !$0.holds(for: current) }) {
            throw DiscfgError(
                .conditionFailed,
                "condition failed for \(key): \(failed.explainFailure(for: current))",
                field: "condition",
                currentItem: current
            )
        }
    }
}
