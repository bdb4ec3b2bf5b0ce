import Foundation

/// How an import writes a snapshot into a config: what it may replace, on what condition,
/// and whether it only works the change out.
public struct ImportOptions: Hashable, Sendable {
    /// Also delete the live keys under ``prefix`` that the snapshot does not name.
    public var replace: Bool
    /// The part of the config the import covers: every key of the snapshot must be under
    /// it, and a replace deletes only keys under it. The whole config by default.
    public var prefix: KeyPrefix
    /// With ``replace``, also delete the schemas (keys under `/.discfg/schema/`) the
    /// snapshot does not name, as a rollback to a revision does. Without it a replace
    /// leaves every schema as it is, so a plain file never removes one by omission.
    public var replaceSchemas: Bool
    /// Apply the import only while the config is at exactly this revision (before the
    /// change expires any due key): a plan reviewed at revision N is the change that
    /// lands, or nothing does (`conditionFailed`).
    public var ifRevision: Revision?
    /// Work the change out and answer it, events and revision as they would be, without
    /// writing anything.
    public var dryRun: Bool

    /// Creates options; the defaults write the snapshot's keys and delete nothing.
    public init(replace: Bool = false, prefix: KeyPrefix = .root, replaceSchemas: Bool = false, ifRevision: Revision? = nil, dryRun: Bool = false) {
        self.replace = replace
        self.prefix = prefix
        self.replaceSchemas = replaceSchemas
        self.ifRevision = ifRevision
        self.dryRun = dryRun
    }

    /// Refuses a snapshot key outside ``prefix``, naming it.
    public func check(_ snapshot: ConfigSnapshot) throws {
        guard prefix != .root else { return }
        if let outside = snapshot.items.first(where: { !prefix.contains($0.key) }) {
            throw DiscfgError.invalid("prefix", "the snapshot's key \(outside.key) is not under the import's prefix \(prefix)")
        }
    }

    /// Refuses the change when the config is not at ``ifRevision``.
    public func checkRevision(_ current: Revision, of config: ConfigName) throws {
        guard let ifRevision, ifRevision != current else { return }
        throw DiscfgError(
            .conditionFailed,
            "config \"\(config)\" is at revision \(current), not \(ifRevision) as the change expects; nothing changed (review the change again at \(current))",
            field: "ifRevision"
        )
    }
}

/// What a dry run worked out, thrown out of the store's transaction so that the store
/// writes nothing, and caught where the store answers (``ImportOptions/answer(_:)``).
public struct DryRunOutcome: Error, Sendable {
    public let result: ImportResult
}

extension ImportOptions {
    /// Runs a store's import, answering a dry run's outcome as its result.
    public static func answer(_ body: () async throws -> ImportResult) async throws -> ImportResult {
        do {
            return try await body()
        } catch let outcome as DryRunOutcome {
            return outcome.result
        }
    }
}
