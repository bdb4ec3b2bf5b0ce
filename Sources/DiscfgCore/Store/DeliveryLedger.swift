/// Remembers, per config and notification target, the last revision delivered, so a batch
/// of changes sent again (a retried stream batch) is not announced twice.
///
/// A store that can keep the ledger beside the config implements it (``DynamoDBStore``
/// keeps it in its table); ``MemoryDeliveryLedger`` serves the rest.
public protocol DeliveryLedger: Sendable {
    /// The last revision of `config` delivered to `target`, zero when none was.
    func deliveredRevision(_ config: ConfigInfo, target: String) async throws -> Revision
    /// Records that `target` has every change of `config` through `revision`; never moves back.
    func recordDelivered(_ config: ConfigInfo, target: String, through revision: Revision) async throws
}

/// A ledger in memory, for stores that have nowhere to keep one.
///
/// Progress is per incarnation of a config (its creation time is part of the slot): a
/// config deleted and created again starts its revisions at 1 and inherits nothing.
public actor MemoryDeliveryLedger: DeliveryLedger {
    private var delivered: [String: Revision] = [:]

    /// Creates an empty ledger.
    public init() {}

    private func slot(_ config: ConfigInfo, _ target: String) -> String { "\(config.name)/\(config.createdAt.milliseconds)/\(target)" }

    public func deliveredRevision(_ config: ConfigInfo, target: String) async throws -> Revision {
        delivered[slot(config, target)] ?? .zero
    }

    public func recordDelivered(_ config: ConfigInfo, target: String, through revision: Revision) async throws {
        let key = slot(config, target)
        if revision > (delivered[key] ?? .zero) { delivered[key] = revision }
    }
}
