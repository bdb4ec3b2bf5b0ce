import Foundation
import DiscfgJSON

/// Staged deployments as changes: the rules are written here once, so every store starts,
/// moves and ends a deployment the same way, each as one atomic change with one revision.
///
/// - Starting stages the candidate's values that differ from the live ones under
///   `/.discfg/staged/ID/` (a removal as a ``StagedAbsence`` marker) and writes the record
///   under `/.discfg/deploying/`; the live keys stay as they are.
/// - COMPLETE swaps each staged value with its live one, so the candidate becomes live and
///   the staging keeps the stable values for a revert; the record moves to
///   `/.discfg/deployed/`.
/// - ROLLED_BACK drops the staging and moves the record; nothing live changes.
/// - REVERTED swaps back (refused when a key changed since the completion) and drops the
///   staging.
/// - While a deployment runs, every other change that writes a key under its prefix is
///   refused, naming it (``refuseWritesUnderRunningDeployments(_:)``).
extension ChangeTransaction {
    /// The records of the deployments running in this config, in id order.
    public func runningDeployments() throws -> [Deployment] {
        try storedRunningDeployments().map(Deployment.init(record:))
    }

    /// Makes `change` as one change of the config.
    /// - Throws: `invalidArgument` for a plan or transition the rules refuse, saying why;
    ///   `conditionFailed` when another deployment runs on an overlapping prefix or the record
    ///   moved on since `after`; `keyNotFound` for an unknown deployment; `schemaViolation`
    ///   when the candidate breaks a schema.
    public mutating func changeDeployment(_ change: DeploymentChange) throws -> DeploymentOutcome {
        _ = try expireDue()
        switch change {
        case .start(let plan):
            return try startDeployment(plan)
        case .transition(let id, let kind, let reason, let after):
            return try recordDeploymentTransition(id, kind, reason: reason, after: after)
        }
    }

    /// Refuses a change that writes a key under a running deployment's prefix: the live keys
    /// there are its stable version until it ends. Called for every change; a change that
    /// writes only discfg's own records reads nothing.
    func refuseWritesUnderRunningDeployments(_ events: [Event]) throws {
        // By index, as every check of a change's events is: each event read in place,
        // where a loop over the array copies every event it looks at.
        guard events.indices.contains(where: { !SchemaTarget.isReserved(events[$0].key) }) else { return }
        let running = try storedRunningDeployments()
        guard !running.isEmpty else { return }
        for deployment in try running.map(Deployment.init(record:)) {
            guard let event = events.first(where: { !SchemaTarget.isReserved($0.key) && deployment.prefix.contains($0.key) }) else { continue }
            throw DiscfgError(
                .conditionFailed,
                "\(event.key) is under \(deployment.prefix), which deployment \(deployment.id) is deploying to config \"\(config)\" (started by \(deployment.startedBy)); nothing was written: wait for it to complete, or roll it back with `discfg deploy rollback \(config)`",
                field: "key"
            )
        }
    }

    private var deploymentPrincipal: String { attribution?.principal.qualifiedID ?? "system:unattributed" }

    mutating func putRecord(_ deployment: Deployment, at key: Key, revision: Revision) throws -> Event {
        let value = try JSONEncoder.discfg(pretty: false).encode(deployment)
        return try recordPut(key, value, contentType: JSONContent.mediaType, expiresAt: nil, over: try storedItem(key), at: revision)
    }

    private mutating func startDeployment(_ plan: DeploymentPlan) throws -> DeploymentOutcome {
        let prefix = plan.prefix
        guard !prefix.path.hasPrefix(SchemaTarget.reserved.path) else {
            throw DiscfgError.invalid("prefix", "\(prefix) holds discfg's own records; deploy a prefix of the config's keys")
        }
        guard plan.entries.count <= DeploymentPlan.maxKeys else {
            throw DiscfgError(.tooLarge, "the candidate names \(plan.entries.count) keys; a deployment changes at most \(DeploymentPlan.maxKeys)", field: "candidate")
        }
        var named = Set<Key>()
        for entry in plan.entries {
            guard prefix.contains(entry.key), !SchemaTarget.isReserved(entry.key) else {
                throw DiscfgError.invalid("key", "\(entry.key) is outside \(prefix), the prefix being deployed; nothing was staged")
            }
            guard entry.expiresAt == nil else {
                throw DiscfgError.invalid("key", "\(entry.key) has a TTL; a deployment stages values that stay, so deploy it without one")
            }
            guard named.insert(entry.key).inserted else {
                throw DiscfgError.invalid("key", "\(entry.key) is named twice in the candidate")
            }
            try Limits.validateValue(entry.value)
            _ = try DeploymentKeys.staged(entry.key, in: plan.id)
        }
        for running in try runningDeployments() where DeploymentKeys.overlap(running.prefix, prefix) {
            throw DiscfgError(
                .conditionFailed,
                "deployment \(running.id) is deploying \(running.prefix) of config \"\(config)\" (started by \(running.startedBy)); one deployment runs on a prefix at a time: wait for it, or roll it back with `discfg deploy rollback \(config)`",
                field: "prefix"
            )
        }
        guard try storedItem(DeploymentKeys.runningRecord(plan.id)) == nil, try storedItem(DeploymentKeys.endedRecord(plan.id)) == nil else {
            throw DiscfgError.invalid("id", "config \"\(config)\" has a deployment \(plan.id) already")
        }
        let live = try storedItems(under: prefix).filter { !SchemaTarget.isReserved($0.key) && !$0.isExpired(at: now) }
        var current: [Key: Item] = [:]
        for item in live { current[item.key] = item }
        var staged: [(key: Key, value: Data, contentType: String?)] = []
        for entry in plan.entries.sorted(by: { $0.key < $1.key }) {
            if let item = current[entry.key], item.value == entry.value, item.contentType == entry.contentType { continue }
            staged.append((entry.key, entry.value, entry.contentType))
        }
        if plan.replace {
            for item in live where !named.contains(item.key) {
                _ = try DeploymentKeys.staged(item.key, in: plan.id)
                staged.append((item.key, Data(), StagedAbsence.contentType))
            }
        }
        guard !staged.isEmpty else {
            throw DiscfgError.invalid("candidate", "the candidate is what \(prefix) of config \"\(config)\" holds already; there is nothing to deploy")
        }
        try checkCandidate(staged.map { ($0.key, $0.contentType == StagedAbsence.contentType && $0.value.isEmpty ? nil : ($0.value, $0.contentType)) }, live: current)
        let stable = try currentRevision()
        let revision = try stable.successor()
        var events = try dropLeftoverStaging(overlapping: prefix, at: revision)
        let deployment = try Deployment(
            id: plan.id, prefix: prefix, stableRevision: stable, candidate: DeploymentCandidate(revision: revision), strategy: plan.strategy,
            startedAt: now.milliseconds, message: plan.message, startedBy: deploymentPrincipal, signals: plan.signals
        )
        for entry in staged {
            let key = try DeploymentKeys.staged(entry.key, in: plan.id)
            events.append(try recordPut(key, entry.value, contentType: entry.contentType, expiresAt: nil, over: try storedItem(key), at: revision))
        }
        events.append(try putRecord(deployment, at: DeploymentKeys.runningRecord(plan.id), revision: revision))
        return DeploymentOutcome(deployment: deployment, events: events, revision: revision)
    }

    /// Checks the candidate as it will be live: flag sets flagd accepts, and the schemas
    /// of the keys and prefixes it touches (each key's schema, and each prefix document
    /// as the candidate leaves it).
    private func checkCandidate(_ staged: [(key: Key, value: (Data, String?)?)], live: [Key: Item]) throws {
        var after: [Key: Item] = live
        for (key, value) in staged {
            guard let (bytes, contentType) = value else {
                after[key] = nil
                continue
            }
            let item = Item(key: key, value: bytes, contentType: contentType, version: 1, createRevision: 0, modRevision: 0, modifiedAt: now, expiresAt: nil)
            after[key] = item
            if ConfigFlags.holdsFlagSet(key) { _ = try ConfigFlags.writableFlagSet(item) }
            if JSONContent.isJSON(contentType) { _ = try JSONContent.parse(bytes, key: key) }
        }
        let schemas = try schemas()
        guard !schemas.isEmpty else { return }
        var found: [SchemaViolation] = []
        for (target, schemaItem) in schemas {
            let validator = try SchemaBook.validator(schemaItem.value, for: target)
            switch target {
            case .key(let key):
                guard staged.contains(where: { $0.key == key }), let item = after[key] else { continue }
                guard let value = try? JSONParser.parse(Array(item.value)) else {
                    found.append(SchemaViolation(key: key.path, pointer: "", keyword: "type", message: "value is not JSON, and its schema requires JSON", schema: key.path))
                    continue
                }
                found += SchemaBook.violations(of: value, against: validator, target: target)
            case .prefix(let schemaPrefix):
                guard staged.contains(where: { schemaPrefix.contains($0.key) }) else { continue }
                var items: [Key: Item] = [:]
                for item in try storedItems(under: schemaPrefix) where !item.isExpired(at: now) && !SchemaTarget.isReserved(item.key) { items[item.key] = item }
                for (key, _) in staged where schemaPrefix.contains(key) { items[key] = after[key] }
                let document = try KeyDocument.read(items.values.sorted { $0.key < $1.key }, under: schemaPrefix, parsed: [:])
                found += SchemaBook.violations(of: document, against: validator, target: target, keys: Set(items.keys))
            }
        }
        if !found.isEmpty { throw SchemaBook.refusal(found) }
    }

    /// Removes the staging an ended, complete deployment kept for a revert, when a new
    /// deployment covers its keys: reverting it past the new one would undo the new one.
    private mutating func dropLeftoverStaging(overlapping prefix: KeyPrefix, at revision: Revision) throws -> [Event] {
        var events: [Event] = []
        for item in try storedItems(under: DeploymentKeys.ended) {
            let ended = try Deployment(record: item)
            guard DeploymentKeys.overlap(ended.prefix, prefix) else { continue }
            for staged in try storedItems(under: DeploymentKeys.staged(ended.id)) {
                events.append(try recordRemoval(of: staged, at: revision))
            }
        }
        return events
    }
}
