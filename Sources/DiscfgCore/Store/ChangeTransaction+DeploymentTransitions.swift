import Foundation

extension ChangeTransaction {
    /// Records `kind` on deployment `id` at this change's time, by its principal, and does
    /// what it means for the keys: COMPLETE makes the candidate live, ROLLED_BACK drops it,
    /// REVERTED puts the stable values back.
    mutating func recordDeploymentTransition(_ id: String, _ kind: DeploymentTransition.Kind, reason: String, after: Int?) throws -> DeploymentOutcome {
        let runningKey = DeploymentKeys.runningRecord(id)
        let endedKey = DeploymentKeys.endedRecord(id)
        let running: Bool
        let item: Item
        if let found = try storedItem(runningKey) {
            (running, item) = (true, found)
        } else if let found = try storedItem(endedKey) {
            (running, item) = (false, found)
        } else {
            throw DiscfgError(.keyNotFound, "config \"\(config)\" has no deployment \(id.debugEscaped); `discfg deploy ls \(config)` lists them", field: "id")
        }
        let deployment = try Deployment(record: item)
        if let after, deployment.transitions.count != after {
            let last = deployment.transitions.last.map { " (now \($0.state.rawValue) by \($0.by))" } ?? ""
            throw DiscfgError(
                .conditionFailed,
                "deployment \(id) has changed since it was read\(last); nothing was written: read it again",
                field: "deployment"
            )
        }
        let next = try deployment.recording(DeploymentTransition(kind, at: now.milliseconds, by: attribution?.principal.qualifiedID ?? "system:unattributed", reason: reason))
        if kind == .complete || kind == .reverted {
            // Read the prefix whole first: a store that reads ahead reads it in one go.
            _ = try storedItems(under: deployment.prefix)
        }
        let revision = try currentRevision().successor()
        var events: [Event] = []
        switch kind {
        case .paused, .resumed, .rollingBack:
            events.append(try putRecord(next, at: runningKey, revision: revision))
        case .rolledBack:
            events += try dropStaging(id, at: revision)
            events += try moveRecord(next, from: item, to: endedKey, revision: revision)
        case .complete:
            events += try swapStaging(id, at: revision)
            events += try moveRecord(next, from: item, to: endedKey, revision: revision)
        case .reverted:
            if running {
                // Complete by the clock but not yet made live: the live keys are the
                // stable version already.
                events += try dropStaging(id, at: revision)
                events += try moveRecord(next, from: item, to: endedKey, revision: revision)
            } else {
                try refuseRevertOverLaterChanges(id, completedAt: item.modRevision)
                events += try swapStaging(id, at: revision)
                events += try dropStaging(id, at: revision)
                events.append(try putRecord(next, at: endedKey, revision: revision))
            }
        }
        try enforce(events.filter { !SchemaTarget.isReserved($0.key) })
        return DeploymentOutcome(deployment: next, events: events, revision: revision)
    }

    private mutating func moveRecord(_ deployment: Deployment, from item: Item, to key: Key, revision: Revision) throws -> [Event] {
        [try recordRemoval(of: item, at: revision), try putRecord(deployment, at: key, revision: revision)]
    }

    private mutating func dropStaging(_ id: String, at revision: Revision) throws -> [Event] {
        try storedItems(under: DeploymentKeys.staged(id)).map { try recordRemoval(of: $0, at: revision) }
    }

    /// Exchanges each staged value with its live key's: the staged version becomes live,
    /// and the staging keeps what was live (absent keys as ``StagedAbsence`` markers).
    private mutating func swapStaging(_ id: String, at revision: Revision) throws -> [Event] {
        var events: [Event] = []
        for staged in try storedItems(under: DeploymentKeys.staged(id)) {
            guard let liveKey = DeploymentKeys.live(staged.key, in: id) else { continue }
            let current = try storedItem(liveKey).flatMap { $0.isExpired(at: now) ? nil : $0 }
            if StagedAbsence.marks(staged) {
                if let current { events.append(try recordRemoval(of: current, at: revision)) }
            } else {
                events.append(try recordPut(liveKey, staged.value, contentType: staged.contentType, expiresAt: nil, over: current, at: revision))
            }
            events.append(try recordPut(
                staged.key, current?.value ?? Data(), contentType: current == nil ? StagedAbsence.contentType : current?.contentType,
                expiresAt: nil, over: staged, at: revision
            ))
        }
        return events
    }

    /// Refuses a revert when a key it would put back changed after the completion: the
    /// revert would undo that change too.
    private func refuseRevertOverLaterChanges(_ id: String, completedAt: Revision) throws {
        let staging = try storedItems(under: DeploymentKeys.staged(id))
        guard !staging.isEmpty else {
            throw DiscfgError.invalid("deployment", "deployment \(id) can no longer be reverted: a later deployment of its keys replaced what it kept")
        }
        for staged in staging {
            guard let liveKey = DeploymentKeys.live(staged.key, in: id) else { continue }
            if let current = try storedItem(liveKey), current.modRevision > completedAt {
                throw DiscfgError(
                    .conditionFailed,
                    "\(liveKey) changed at revision \(current.modRevision), after deployment \(id) completed; a revert would undo that change too, so nothing was written",
                    field: "deployment"
                )
            }
        }
    }
}
