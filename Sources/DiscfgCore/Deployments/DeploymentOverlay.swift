/// What a reader that names an entity sees while deployments run: the one place every face
/// (the REST API and its fast path, the Lambda, the agent, the Swift client) decides it.
///
/// Live keys hold the stable version until a deployment completes; for a key under a
/// running deployment's prefix, an entity the deployment exposes now
/// (``Deployment/seesCandidate(entity:at:)``) reads the staged value instead, or no key
/// where the candidate removes it. A plain read, naming no entity, sees the candidate only
/// once the clock has made the deployment COMPLETE (before a monitor records it).
///
/// ```swift
/// let overlay = DeploymentOverlay(running: deployments, staging: stagedItems)
/// overlay.item(at: key, live: item, entity: "user-42", at: now)
/// ```
public struct DeploymentOverlay: Sendable, Hashable {
    /// A running deployment and its staged values, by the live key they stand for (nil:
    /// the candidate removes the key).
    public struct Running: Sendable, Hashable {
        /// The deployment's record.
        public var deployment: Deployment
        /// Its staged values, by live key.
        public var staged: [Key: Item?]
    }

    /// The running deployments, in id order.
    public private(set) var running: [Running]

    /// No deployment: every reader sees the live keys.
    public static let none = DeploymentOverlay(running: [], staging: [])

    /// The overlay of `running` deployments with `staging`, the items under
    /// ``DeploymentKeys/staging`` (those of other deployments are ignored).
    public init(running: [Deployment], staging: [Item]) {
        self.running = running.sorted { $0.id < $1.id }.map { deployment in
            var staged: [Key: Item?] = [:]
            for item in staging {
                guard let key = DeploymentKeys.live(item.key, in: deployment.id) else { continue }
                staged[key] = StagedAbsence.marks(item) ? .some(nil) : .some(item.relocated(to: key))
            }
            return Running(deployment: deployment, staged: staged)
        }
    }

    /// Whether any deployment runs.
    public var isEmpty: Bool { running.isEmpty }

    /// The running deployment covering `key`, if any (prefixes of running deployments do not overlap).
    public func deployment(covering key: Key) -> Running? {
        running.first { $0.deployment.prefix.contains(key) }
    }

    /// Whether a reader naming `entity` (nil: a plain read) sees `deployment`'s candidate at `now`.
    public static func sees(_ deployment: Deployment, entity: String?, at now: Int64) -> Bool {
        let status = deployment.status(at: now)
        guard let entity else { return status.state == .complete }
        return status.exposes(bucket: deployment.bucket(of: entity))
    }

    /// Whether a reader naming `entity` sees the candidate of a deployment covering keys
    /// under `prefix` at `now`: when not, the live keys there are what it reads.
    public func showsCandidate(under prefix: KeyPrefix, entity: String?, at now: Int64) -> Bool {
        running.contains { DeploymentKeys.overlap($0.deployment.prefix, prefix) && Self.sees($0.deployment, entity: entity, at: now) }
    }

    /// The item a reader naming `entity` sees at `key`, given the live one.
    public func item(at key: Key, live: Item?, entity: String?, at now: Int64) -> Item? {
        guard let covering = deployment(covering: key), Self.sees(covering.deployment, entity: entity, at: now),
              let staged = covering.staged[key] else { return live }
        return staged
    }

    /// The items a reader naming `entity` sees under `prefix`, given the live ones there,
    /// in key order.
    public func items(_ live: [Item], under prefix: KeyPrefix, entity: String?, at now: Int64) -> [Item] {
        let shown = running.filter { DeploymentKeys.overlap($0.deployment.prefix, prefix) && Self.sees($0.deployment, entity: entity, at: now) }
        guard !shown.isEmpty else { return live }
        var merged: [Key: Item] = [:]
        for item in live { merged[item.key] = item }
        for running in shown {
            for (key, staged) in running.staged where prefix.contains(key) { merged[key] = staged }
        }
        return merged.values.sorted { $0.key < $1.key }
    }

    /// A listing's page as a reader naming `entity` sees it: its items overlaid, and the
    /// keys the candidate adds on the page whose range holds them (after the query's cursor,
    /// up to the page's last key, or to the end on the last page; a non-recursive listing
    /// takes only the prefix's direct children, and its sub-prefixes stay as listed).
    public func page(_ page: ListPage, of query: ListQuery, entity: String?, at now: Int64) -> [Item] {
        let shown = running.filter { DeploymentKeys.overlap($0.deployment.prefix, query.prefix) && Self.sees($0.deployment, entity: entity, at: now) }
        guard !shown.isEmpty else { return page.items }
        var merged: [Key: Item?] = [:]
        for item in page.items { merged[item.key] = item }
        let upper = page.nextCursor == nil ? nil : page.items.last?.key.path
        for running in shown {
            for (key, staged) in running.staged where query.prefix.contains(key) {
                if merged[key] == nil {
                    if let lower = query.cursor, key.path <= lower { continue }
                    if let upper, key.path > upper { continue }
                    if !query.recursive, key.path.utf8.dropFirst(query.prefix.path.utf8.count).contains(UInt8(ascii: "/")) { continue }
                }
                merged[key] = .some(staged)
            }
        }
        return merged.values.compactMap { $0 }.sorted { $0.key < $1.key }
    }

    /// The version a reader naming `entity` reads of the deployment covering `key`, if one
    /// does: its candidate revision or its stable one.
    public func version(of key: Key, entity: String?, at now: Int64) -> (deployment: Deployment, revision: Revision)? {
        guard let covering = deployment(covering: key) else { return nil }
        let deployment = covering.deployment
        return (deployment, Self.sees(deployment, entity: entity, at: now) ? deployment.candidateRevision : deployment.stableRevision)
    }
}

extension Item {
    /// This item as it reads at `key`.
    func relocated(to key: Key) -> Item {
        var item = self
        item.key = key
        return item
    }
}
