import DiscfgCore
import DiscfgJSON
import Foundation
import Tracing

/// The store as the API sees it: another store, every operation of which is timed into
/// ``APIMetrics`` and, with a tracer, made a client span (`store.get`, `store.set`, …)
/// under the request's; and every write of which is noted in the server's
/// ``ConfigViews`` before its caller is answered (read your writes). Over a store that
/// only reads (``ReadOnlyCopy``: the agent's replica) it refuses every change with
/// `readOnly`, naming the store to write to: the one place a server decides it serves a
/// copy.
public struct InstrumentedStore: ConfigStore {
    public let base: any ConfigReading
    /// `base` when it takes changes; nil for a read-only copy.
    private let writer: (any ConfigStore)?
    public let metrics: APIMetrics
    public let views: ConfigViews?
    /// Where the store calls' spans go; nil for none.
    public let tracer: (any Tracer)?

    /// Wraps `base`.
    public init(_ base: any ConfigReading, metrics: APIMetrics, views: ConfigViews? = nil, tracer: (any Tracer)? = nil) {
        self.base = base
        self.writer = base as? any ConfigStore
        self.metrics = metrics
        self.views = views
        self.tracer = tracer
    }

    /// The store changes go to, or the refusal naming `what` was refused.
    private func writable(_ what: @autoclosure () -> String) throws -> any ConfigStore {
        if let writer { return writer }
        let source = (base as? any ReadOnlyCopy)?.source ?? "another store"
        throw DiscfgError(.readOnly, "\(what()) refused: this is a read-only copy of \(source); write there")
    }

    private func noted<T>(_ config: ConfigName, _ revision: (T) -> Revision?, _ result: T) -> T {
        if let views, let revision = revision(result) { views.committed(config, at: revision) }
        return result
    }

    @inline(__always)
    private func timed<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        guard let tracer else { return try await measured(operation, span: nil, body) }
        let span = tracer.startSpan("store.\(operation)", ofKind: .client)
        defer { span.end() }
        span.attributes["db.operation.name"] = operation
        return try await InstrumentationContext.$current.withValue(span.context) { try await measured(operation, span: span, body) }
    }

    @inline(__always)
    private func measured<T>(_ operation: String, span: (any Span)?, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        do {
            let result = try await body()
            metrics.recordStoreOperation(operation, seconds: (ContinuousClock.now - start).seconds, failed: false)
            return result
        } catch let error as DiscfgError where error.code != .unavailable && error.code != .internal && error.code != .throttled {
            // Not-found and failed conditions are answers, not store failures.
            metrics.recordStoreOperation(operation, seconds: (ContinuousClock.now - start).seconds, failed: false)
            span?.attributes["discfg.error.code"] = error.code.rawValue
            throw error
        } catch {
            metrics.recordStoreOperation(operation, seconds: (ContinuousClock.now - start).seconds, failed: true)
            // The kind of failure, not its text: the detail stays in the server's log.
            span?.attributes["error.type"] = (error as? DiscfgError)?.code.rawValue ?? String(describing: type(of: error))
            span?.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    public func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo {
        let store = try writable("creating config \"\(name)\"")
        return try await timed("createConfig") { try await store.createConfig(name, settings: settings) }
    }
    public func deleteConfig(_ name: ConfigName) async throws {
        let store = try writable("deleting config \"\(name)\"")
        try await timed("deleteConfig") { try await store.deleteConfig(name) }
        views?.deleted(name)
    }
    public func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo {
        let store = try writable("updating config \"\(name)\"")
        return try await timed("updateConfig") { try await store.updateConfig(name, patch) }
    }
    public func listConfigs() async throws -> [ConfigInfo] {
        try await timed("listConfigs") { try await base.listConfigs() }
    }
    public func configInfo(_ name: ConfigName) async throws -> ConfigInfo {
        try await timed("configInfo") { try await base.configInfo(name) }
    }
    public func get(_ key: Key, in config: ConfigName, atRevision revision: Revision?) async throws -> Item? {
        try await timed("get") { try await base.get(key, in: config, atRevision: revision) }
    }
    public func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage {
        try await timed("list") { try await base.list(in: config, query) }
    }
    public func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        let store = try writable("setting \(key)")
        return noted(config, \.revision, try await timed("set") { try await store.set(key, to: value, in: config, options: options) })
    }
    public func patch(_ key: Key, _ patch: ValuePatch, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        let store = try writable("patching \(key)")
        return noted(config, \.revision, try await timed("patch") { try await store.patch(key, patch, in: config, conditions: conditions) })
    }
    public func putDocument(_ document: JSONValue, under prefix: KeyPrefix, in config: ConfigName, replace: Bool) async throws -> ImportResult {
        let store = try writable("writing a document under \(prefix)")
        return noted(config, \.revision, try await timed("putDocument") { try await store.putDocument(document, under: prefix, in: config, replace: replace) })
    }
    public func setSchema(_ target: SchemaTarget, to schema: Data?, in config: ConfigName, force: Bool) async throws -> SchemaChange {
        let store = try writable("setting a schema")
        return noted(config, \.event.revision, try await timed("setSchema") { try await store.setSchema(target, to: schema, in: config, force: force) })
    }
    public func changeDeployment(_ change: DeploymentChange, in config: ConfigName) async throws -> DeploymentOutcome {
        let store = try writable("changing a deployment")
        return noted(config, \.revision, try await timed("changeDeployment") { try await store.changeDeployment(change, in: config) })
    }
    public func reportHealth(_ report: HealthReport, deployment id: String, in config: ConfigName) async throws {
        let store = try writable("reporting health")
        try await timed("reportHealth") { try await store.reportHealth(report, deployment: id, in: config) }
    }
    public func healthReports(deployment id: String, in config: ConfigName) async throws -> [HealthReport] {
        let store = try writable("reading health reports")
        return try await timed("healthReports") { try await store.healthReports(deployment: id, in: config) }
    }
    public func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        let store = try writable("deleting \(key)")
        return noted(config, \.revision, try await timed("delete") { try await store.delete(key, in: config, conditions: conditions) })
    }
    public func deletePrefix(_ prefix: KeyPrefix, in config: ConfigName) async throws -> [Event] {
        let store = try writable("deleting \(prefix)")
        return noted(config, \.last?.revision, try await timed("deletePrefix") { try await store.deletePrefix(prefix, in: config) })
    }
    public func compact(_ config: ConfigName, through revision: Revision) async throws -> ConfigInfo {
        let store = try writable("compacting config \"\(config)\"")
        return try await timed("compact") { try await store.compact(config, through: revision) }
    }
    public func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult {
        let store = try writable("a transaction")
        let result = try await timed("transact") { try await store.transact(transaction, in: config) }
        // Its changes share one revision: the view answers once it has applied them all.
        if let views, !result.events.isEmpty { views.committed(config, at: result.revision, changes: result.events.count) }
        return result
    }
    public func history(of key: Key, in config: ConfigName, _ query: HistoryQuery) async throws -> HistoryPage {
        try await timed("history") { try await base.history(of: key, in: config, query) }
    }
    public func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int, maxBytes: Int) async throws -> EventBatch {
        try await timed("events") { try await base.events(in: config, scope: scope, from: from, limit: limit, maxBytes: maxBytes) }
    }
    public func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error> {
        await base.watch(config, scope: scope, from: from)
    }
    /// Times reading the header; the pages are timed by whoever reads them.
    public func exportPages(_ config: ConfigName, maxBytes: Int, atRevision revision: Revision?) async throws -> SnapshotPages {
        try await timed("export") { try await base.exportPages(config, maxBytes: maxBytes, atRevision: revision) }
    }
    public func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, options: ImportOptions) async throws -> ImportResult {
        let store = try writable("an import")
        let result = try await timed("import") { try await store.importSnapshot(snapshot, into: config, options: options) }
        return options.dryRun ? result : noted(config, \.revision, result)
    }
    public func sweepExpired() async throws -> [Event] {
        let store = try writable("expiring keys")
        return try await timed("sweepExpired") { try await store.sweepExpired() }
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
