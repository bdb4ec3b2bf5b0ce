import DiscfgCore
import DiscfgJSON
import Foundation
import Synchronization

/// The embedded store: one SQLite file, the default for a single machine.
///
/// The file is in WAL mode, and no change is acknowledged before the log holding it has
/// been synced to disk, so an acknowledged change survives a crash or power loss. One writer thread commits changes in groups; reads run in
/// parallel and never wait for it. Several processes may use the file at once (the CLI
/// while `discfg serve` runs): SQLite locks the writes, and watchers notice other
/// processes' commits by polling the file's data version every 100 ms.
///
/// ```swift
/// let store = try SQLiteStore(path: "/var/lib/discfg/discfg.db")
/// ```
public final class SQLiteStore: ConfigStore, GroupCommitReporting {
    /// Where the file is.
    public let path: String
    let readers: SQLiteReaderPool
    let writer: SQLiteWriter
    private let clock: any WallClock
    private let notifier: ChangeNotifier
    private let sweeper = ExpirySweeper()
    private let oldestRows = OldestHistoryRows()
    private static let eventsSince = SQLiteStatement(
        "SELECT \(SQLiteRows.eventColumns) FROM history WHERE config = ? AND revision >= ? AND key >= ? AND key < ? ORDER BY revision, sub"
    )

    /// Opens the store at `path`, creating the file, its directory and tables if needed,
    /// or, with `create` false, only a file that is already there.
    ///
    /// The store holds credentials: a folder it creates is 0700 and a file it creates
    /// 0600 (SQLite gives the -wal and -shm files the file's mode). Existing folders
    /// and files keep theirs. An existing empty file is set up as a new store either way.
    /// - Parameter create: false for a command that only uses a store: a missing file
    ///   is then an error, and neither the file nor its folder is made.
    /// - Throws: `unavailable` when the file cannot be opened or is not a discfg store;
    ///   with `create` false, when there is no file at `path`.
    public init(path: String, clock: any WallClock = SystemClock(), create: Bool = true) throws {
        self.path = path
        self.clock = clock
        if create {
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            // An empty file is an empty database; creating it here fixes its mode.
            let created = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            if created >= 0 { close(created) }
        } else if !FileManager.default.fileExists(atPath: path) {
            throw Self.missing(path)
        }
        // Without SQLITE_OPEN_CREATE, a file removed since the check above is not made again.
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, create: create)
        } catch is DiscfgError where !create && !FileManager.default.fileExists(atPath: path) {
            throw Self.missing(path)
        }
        let mode = try connection.first("PRAGMA journal_mode = WAL") { $0.text(0) }
        guard mode == "wal" else {
            throw DiscfgError(.unavailable, "SQLite store \(path) cannot use write-ahead logging (journal mode \(mode ?? "unknown"))", field: "store")
        }
        // Each commit syncs the log before it is visible or anyone is told, so every
        // acknowledged change is durable; its pages reach the kernel in one write.
        try connection.execute("PRAGMA synchronous = FULL")
        connection.gatherLogWrites()
        // Checkpoints run beside the commits (SQLiteCheckpointer), not inside one; a log
        // that grew while readers held it back is trimmed back once it starts over.
        try connection.execute("PRAGMA wal_autocheckpoint = 0")
        try connection.execute("PRAGMA journal_size_limit = \(16 * 1024 * 1024)")
        try SQLiteSchema.migrate(connection)
        writer = SQLiteWriter(connection: connection, checkpointer: SQLiteCheckpointer(path: path))
        let readers = SQLiteReaderPool(path: path)
        self.readers = readers
        let watcher = DataVersionWatcher(path: path)
        notifier = ChangeNotifier(pollInterval: .milliseconds(100)) { watcher.changed() }
    }

    public var groupCommits: GroupCommitStatistics { writer.statistics }

    /// The error for a store that is not there, when opening may not create one.
    static func missing(_ path: String) -> DiscfgError {
        DiscfgError(.unavailable, "no store at \(path): the file does not exist", field: "store")
    }

    public func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo {
        let now = clock.now()
        let settingsJSON = try String(decoding: JSONEncoder().encode(settings), as: UTF8.self)
        return try await writer.write { connection in
            let inserted = try connection.run(
                "INSERT OR IGNORE INTO configs (name, revision, compacted_revision, created_at, modified_at, settings) VALUES (?, 0, 0, ?, ?, ?)",
                [.text(name.rawValue), .integer(now.milliseconds), .integer(now.milliseconds), .text(settingsJSON)]
            )
            guard inserted == 1 else { throw DiscfgError(.configExists, "config \"\(name)\" already exists", field: "config") }
            return ConfigInfo(name: name, revision: .zero, createdAt: now, modifiedAt: now, settings: settings)
        }
    }

    public func deleteConfig(_ name: ConfigName) async throws {
        try await writer.write { connection in
            let name = SQLiteValue.text(name.rawValue)
            try connection.run("DELETE FROM kv WHERE config = ?", [name])
            try connection.run("DELETE FROM history WHERE config = ?", [name])
            try connection.run("DELETE FROM tombstones WHERE config = ?", [name])
            try connection.run("DELETE FROM leases WHERE config = ?", [name])
            try connection.run("DELETE FROM health_reports WHERE config = ?", [name])
            guard try connection.run("DELETE FROM configs WHERE name = ?", [name]) == 1 else {
                throw DiscfgError.configNotFound(try ConfigName(name.text))
            }
        }
        oldestRows.forget(name.rawValue)
        notifier.deleted(name)
    }

    public func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo {
        try patch.checkAlarms()
        let info = try await writer.write { [oldestRows, clock] connection in
            let now = clock.now()
            guard var info = try Self.configInfo(name, connection) else { throw DiscfgError.configNotFound(name) }
            info.settings = patch.applied(to: info.settings)
            info.modifiedAt = now
            let settingsJSON = try String(decoding: JSONEncoder().encode(info.settings), as: UTF8.self)
            try connection.run(
                "UPDATE configs SET settings = ?, modified_at = ? WHERE name = ?",
                [.text(settingsJSON), .integer(now.milliseconds), .text(name.rawValue)]
            )
            // Started after the settings changed, so it prunes by the new ones.
            try SQLiteTransaction(connection: connection, config: name, now: now).pruneHistory(oldestRows)
            return try Self.configInfo(name, connection) ?? info
        }
        notifier.notify(name)
        return info
    }

    public func listConfigs() async throws -> [ConfigInfo] {
        try readers.read { try $0.query("SELECT \(SQLiteRows.configColumns) FROM configs ORDER BY name", [], SQLiteRows.config) }
    }

    public func configInfo(_ name: ConfigName) async throws -> ConfigInfo {
        try readers.read { try Self.requireConfig(name, $0) }
    }

    public func get(_ key: Key, in config: ConfigName, atRevision revision: Revision?) async throws -> Item? {
        let now = clock.now()
        return try readers.read { connection in
            let current = try connection.first(SQLiteRows.itemByKey, [.text(config.rawValue), .text(key.path)], SQLiteRows.item)
            guard let revision else {
                if let current, !current.isExpired(at: now) { return current }
                // Absent: tell a missing key from a missing config.
                _ = try Self.requireConfig(config, connection)
                return nil
            }
            let info = try Self.requireConfig(config, connection)
            return try PastRead.resolve(
                key: key, at: revision, configRevision: info.revision, compacted: info.compactedRevision,
                current: current, now: now,
                firstEventAfter: { after in
                    let chain = SQLiteKeyChain(connection: connection, config: config.rawValue)
                    return try chain.firstEvent(on: key.path, after: after.storageValue).flatMap(chain.event)
                }
            )
        }
    }

    public func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage {
        var folder = try ListingFolder(query)
        let now = clock.now()
        return try readers.read { connection in
            let info = try Self.requireConfig(config, connection)
            // Rows are stepped one at a time and the scan stops once the page is full, by
            // count or by bytes; a folded directory restarts the scan past it.
            var start: String? = folder.scanStart
            while let from = start, !folder.isDone {
                start = nil
                try connection.forEach(SQLiteRows.itemsInRange, [.text(config.rawValue), .text(from), .text(query.prefix.upperBound)]) { row in
                    let item = SQLiteRows.item(row)
                    guard !item.isExpired(at: now) else { return true }
                    if let jump = folder.offer(item) {
                        start = jump
                        return false
                    }
                    return !folder.isDone
                }
            }
            return folder.page(revision: info.revision)
        }
    }

    public func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        try await change(config) { try $0.set(key, to: value, options: options) }
    }

    public func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        try await change(config) { try $0.delete(key, conditions: conditions) }
    }

    public func deletePrefix(_ prefix: KeyPrefix, in config: ConfigName) async throws -> [Event] {
        try await change(config) { try $0.deletePrefix(prefix) }
    }

    public func putDocument(_ document: JSONValue, under prefix: KeyPrefix, in config: ConfigName, replace: Bool) async throws -> ImportResult {
        try await change(config) { try $0.putDocument(document, under: prefix, replace: replace) }
    }

    public func setSchema(_ target: SchemaTarget, to schema: Data?, in config: ConfigName, force: Bool) async throws -> SchemaChange {
        try await change(config) { try $0.setSchema(target, to: schema, force: force) }
    }

    public func changeDeployment(_ change: DeploymentChange, in config: ConfigName) async throws -> DeploymentOutcome {
        try await self.change(config) { try $0.changeDeployment(change) }
    }

    public func compact(_ config: ConfigName, through revision: Revision) async throws -> ConfigInfo {
        let info = try await writer.write { connection in
            let info = try Self.requireConfig(config, connection)
            guard revision <= info.revision else { throw Self.futureCompaction(revision, config: config, current: info.revision) }
            guard revision > info.compactedRevision else { return info }
            let name = SQLiteValue.text(config.rawValue)
            try connection.run("UPDATE configs SET compacted_revision = ? WHERE name = ?", [.integer(revision.storageValue), name])
            try SQLiteTransaction.dropHistory(connection, config: name, through: revision)
            return try Self.requireConfig(config, connection)
        }
        notifier.notify(config)
        return info
    }

    public func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult {
        // Validated once, where it runs: ``ChangeTransaction`` checks it on either path.
        guard transaction.writes else {
            // Only reads: answered from a reader's snapshot, beside the writer.
            let now = clock.now()
            return try readers.read { try SQLiteTransaction(connection: $0, config: config, now: now).read(transaction) }
        }
        return try await change(config, by: transaction.attribution) { try $0.apply(transaction) }
    }

    public func history(of key: Key, in config: ConfigName, _ query: HistoryQuery) async throws -> HistoryPage {
        try Limits.validatePageSize(query.limit)
        try Limits.validatePageBytes(query.maxBytes)
        return try readers.read { connection in
            let info = try Self.requireConfig(config, connection)
            let before = Int64(clamping: query.before?.rawValue ?? UInt64(Int64.max))
            var budget = PageBudget(bytes: query.maxBytes)
            var page: [Event] = []
            var more = false
            try SQLiteKeyChain(connection: connection, config: config.rawValue).walk(key.path, before: before) { event in
                guard page.count < query.limit, budget.take(PageBudget.size(event)) else {
                    more = true
                    return false
                }
                page.append(event)
                return true
            }
            return HistoryPage(events: page, nextBefore: more ? page.last?.revision : nil, compactedRevision: info.compactedRevision)
        }
    }

    public func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int, maxBytes: Int) async throws -> EventBatch {
        try Limits.validatePageSize(limit)
        try Limits.validatePageBytes(maxBytes)
        let from = max(from, Revision(1))
        return try readers.read { connection in
            let info = try Self.requireConfig(config, connection)
            guard from > info.compactedRevision else {
                throw DiscfgError.compacted(from, through: info.compactedRevision, field: "fromRevision")
            }
            let (low, high): (String, String) = switch scope {
            case .key(let key): (key.path, key.path + "\u{0}")
            case .prefix(let prefix): (prefix.path, prefix.upperBound)
            }
            var page = EventPage(limit: limit, maxBytes: maxBytes)
            try connection.forEach(Self.eventsSince, [.text(config.rawValue), .integer(from.storageValue), .text(low), .text(high)]) { row in
                page.offer(SQLiteRows.event(row))
            }
            return page.batch(latest: info.revision, from: from)
        }
    }

    public func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error> {
        let subscription = notifier.subscribe(config)
        // "Now" is when watch is called, not when the stream's task first runs; an unknown
        // config is left to the stream, which ends with `configNotFound`.
        let start = from ?? (try? readers.read { try Self.requireConfig(config, $0) })?.revision.next
        let stream = followEvents(config, scope: scope, from: start, subscription: subscription)
        sweeper.ensureRunning(while: notifier) { [weak self] in _ = try? await self?.sweepExpired() }
        return stream
    }

    public func exportPages(_ config: ConfigName, maxBytes: Int, atRevision revision: Revision?) async throws -> SnapshotPages {
        try await RevisionExport.pages(of: self, config, maxBytes: maxBytes, atRevision: revision, now: clock.now())
    }

    public func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, options: ImportOptions) async throws -> ImportResult {
        try await ImportOptions.answer { try await change(config) { try $0.importSnapshot(snapshot, options: options) } }
    }

    public func sweepExpired() async throws -> [Event] {
        let now = clock.now()
        let due = try readers.read { connection in
            try connection.query(
                // Named, or the planner scans the whole table instead of the expiry index.
                "SELECT DISTINCT config FROM kv INDEXED BY kv_expiry WHERE expires_at <= ?", [.integer(now.milliseconds)]
            ) { try ConfigName($0.text(0)) }
        }
        var events: [Event] = []
        for config in due {
            do {
                events += try await change(config) { try $0.expireDue() }
            } catch let error as DiscfgError where error.code == .configNotFound {
                continue
            }
        }
        return events
    }

    /// Runs one change in the writer's next group, prunes history, and wakes watchers.
    /// - Parameter attribution: who makes it, when the caller names them; nil for
    ///   ``Attribution/current``.
    private func change<T: Sendable>(
        _ config: ConfigName, by attribution: Attribution? = nil, _ body: @escaping @Sendable (inout SQLiteTransaction) throws -> T
    ) async throws -> T {
        // Read here, in the caller's task: the writer's thread has no task-locals.
        let attribution = try Attribution.forChange(attribution)
        let result = try await writer.writeChange { [oldestRows, clock] connection, configs in
            // The time is read in the writer, in commit order: read before waiting for it,
            // a change could be stamped earlier than the one committed before it.
            let now = clock.now()
            var transaction = try SQLiteTransaction(connection: connection, config: config, now: now, attribution: attribution, configs: configs)
            let before = try transaction.currentRevision()
            let result = try body(&transaction)
            if try transaction.currentRevision() != before {
                let settings = try transaction.storedSettings()
                try transaction.checkChange(settings)
                try transaction.pruneHistory(oldestRows, settings: settings)
            }
            return result
        }
        notifier.notify(config)
        return result
    }

    private static func configInfo(_ name: ConfigName, _ connection: SQLiteConnection) throws -> ConfigInfo? {
        try connection.first(SQLiteRows.configByName, [.text(name.rawValue)], SQLiteRows.config)
    }

    static func requireConfig(_ name: ConfigName, _ connection: SQLiteConnection) throws -> ConfigInfo {
        guard let info = try configInfo(name, connection) else { throw DiscfgError.configNotFound(name) }
        return info
    }
}

/// Notices commits made through any other connection to the file — another process, or
/// this process's writer — by watching SQLite's `data_version`.
private final class DataVersionWatcher: Sendable {
    private let path: String
    private let state = Mutex<(box: ConnectionBox?, version: Int64?)>((nil, nil))

    init(path: String) {
        self.path = path
    }

    /// Whether the file changed since the last call.
    func changed() -> Bool {
        state.withLock { state in
            do {
                let box = try state.box ?? ConnectionBox(SQLiteConnection(path: path, create: false))
                state.box = box
                let version = try box.connection.first("PRAGMA data_version") { $0.integer(0) }
                defer { state.version = version }
                // The first reading has nothing to compare with; report a change so a write
                // made between subscribing and this first poll is not missed (a spurious
                // wake-up only makes watchers look again).
                return version != state.version
            } catch {
                // A file that cannot be read now is retried on the next tick.
                state.box = nil
                return false
            }
        }
    }
}

extension SQLiteValue {
    fileprivate var text: String {
        if case .text(let text) = self { return text }
        return ""
    }
}
