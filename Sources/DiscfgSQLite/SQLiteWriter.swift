import Dispatch
import DiscfgCore
import Synchronization

/// The one writer of a SQLite store: a dedicated thread that commits changes in groups.
///
/// Changes that arrive while a commit is in progress wait, then go into the next
/// transaction together. A change that fails undoes only itself: most fail before they
/// write (a condition, a missing key) and have nothing to undo; one that fails after
/// writing (a schema, a quota) has the group rolled back and run again with each change
/// inside its own savepoint. Savepoints cost every change a copy of each page it
/// touches, so changes run without them until one is needed. The commit syncs the log (`synchronous=FULL`) before the group becomes visible to readers, so one fsync makes the whole group durable (group commit) and no
/// caller hears back, and no reader sees a change, before it is on disk. The connection
/// gathers the commit's log pages into one write (CSQLiteLog). Blocking SQLite calls
/// stay off Swift's cooperative threads.
///
/// A group's changes of keys share the config rows they read and move
/// (``SQLiteConfigRows``), written once before the commit; any other write first finds
/// the table as those changes left it.
final class SQLiteWriter: Sendable {
    /// A change waiting for the next group, and how to tell its caller the outcome.
    private struct Job: Sendable {
        /// Whether it is a change of keys, which keeps its config's row in the group's rows.
        let changesKeys: Bool
        /// Runs the change (inside a savepoint of its own when `savepoint`) and returns
        /// whether it succeeded, with what to do once the group's commit succeeded (nil)
        /// or failed (the error). A change that fails outside a savepoint leaves what it
        /// wrote for the group to undo.
        let run: @Sendable (SQLiteConnection, SQLiteConfigRows, _ savepoint: Bool) -> Ran
        /// Tells the caller the group could not start; the change never ran.
        let fail: @Sendable (any Error) -> Void
    }

    /// What running a job did.
    private struct Ran {
        let succeeded: Bool
        let complete: @Sendable ((any Error)?) -> Void
    }

    /// How a group ended.
    private enum GroupEnd {
        /// Committed, or failed as a whole; the jobs that never ran are left.
        case finished(notRun: ArraySlice<Job>)
        /// Rolled back after a change failed with writes no savepoint could undo alone:
        /// the group runs again, each change in a savepoint.
        case undone
    }

    /// The group's config rows; the writer's thread alone uses them. A group that commits
    /// leaves them as the table now is, so the next group starts from them unless another
    /// connection committed in between (`data_version`, read once the next group holds
    /// the write lock, moved): then they are read again.
    private final class GroupRows: @unchecked Sendable {
        let configs = SQLiteConfigRows()
        /// `PRAGMA data_version` as the last group found it.
        var dataVersion: Int64?
    }

    /// The most configs' rows kept from one group to the next; past it they are read again.
    private static let keptConfigs = 8
    private static let dataVersion = SQLiteStatement("PRAGMA data_version")

    private static let begin = SQLiteStatement("BEGIN IMMEDIATE")
    private static let savepoint = SQLiteStatement("SAVEPOINT change")
    private static let release = SQLiteStatement("RELEASE change")

    private struct Queue {
        var jobs: [Job] = []
        var draining = false
    }

    /// The commits and syncs made so far.
    var statistics: GroupCommitStatistics { stats.withLock { $0 } }
    private let stats = Mutex(GroupCommitStatistics())

    private let thread = DispatchQueue(label: "discfg.sqlite.writer", qos: .userInitiated)
    private let box: ConnectionBox
    private let group = GroupRows()
    private let queue = Mutex(Queue())
    private let checkpointer: SQLiteCheckpointer

    /// The writer of `connection`, whose automatic checkpoints must be off
    /// (`checkpointer` makes them, off the commit path) and whose commits sync the log.
    init(connection: SQLiteConnection, checkpointer: SQLiteCheckpointer) {
        box = ConnectionBox(connection)
        self.checkpointer = checkpointer
    }

    /// Runs `body` in a write transaction and returns its result once it is committed.
    /// If `body` throws, its changes are undone and the error is rethrown; others in the
    /// same group are unaffected. The `configs` table is as the group's changes so far
    /// left it.
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await enqueue(changesKeys: false) { connection, _ in try body(connection) }
    }

    /// Runs a change of keys like ``write(_:)``, with the group's config rows: read from
    /// them, and its config's move kept in them until the group commits.
    func writeChange<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection, SQLiteConfigRows) throws -> T) async throws -> T {
        try await enqueue(changesKeys: true, body)
    }

    private func enqueue<T: Sendable>(changesKeys: Bool, _ body: @escaping @Sendable (SQLiteConnection, SQLiteConfigRows) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = Job(changesKeys: changesKeys, run: { connection, configs, savepoint in
                // A change undone takes its moves of the rows with it.
                let before = configs.rows
                do {
                    if savepoint { try connection.run(Self.savepoint) }
                    let value = try body(connection, configs)
                    if savepoint { try connection.run(Self.release) }
                    return Ran(succeeded: true) { commitError in
                        if let commitError { continuation.resume(throwing: commitError) } else { continuation.resume(returning: value) }
                    }
                } catch {
                    if savepoint, connection.inTransaction {
                        _ = try? connection.run("ROLLBACK TO change")
                        _ = try? connection.run("RELEASE change")
                    }
                    configs.rows = before
                    return Ran(succeeded: false) { _ in continuation.resume(throwing: error) }
                }
            }, fail: { continuation.resume(throwing: $0) })
            let startDraining = queue.withLock { queue in
                queue.jobs.append(job)
                defer { queue.draining = true }
                return !queue.draining
            }
            if startDraining {
                thread.async { [self] in drain() }
            }
        }
    }

    private func drain() {
        while true {
            // One commit, and one sync of the log, per group: while a commit runs,
            // changes gather and go into the next group together (they could not be
            // acknowledged before the next sync anyway), so a group holds everything
            // that arrived during one cycle and the log is written once for it.
            let jobs = queue.withLock { queue in
                defer { queue.jobs.removeAll(keepingCapacity: true) }
                if queue.jobs.isEmpty { queue.draining = false }
                return queue.jobs
            }
            if jobs.isEmpty { return }
            commit(jobs)
        }
    }

    private func commit(_ jobs: [Job]) {
        var pending = jobs[...]
        var savepoints = false
        while !pending.isEmpty {
            switch commitGroup(pending, savepoints: savepoints && pending.count > 1) {
            case .finished(let notRun):
                pending = notRun
                savepoints = false
            case .undone:
                savepoints = true
            }
        }
    }

    /// Runs `jobs` as one transaction, each change in a savepoint of its own when
    /// `savepoints`, and tells their callers the outcome. Returns the jobs that never
    /// ran: a failure that makes SQLite roll the whole group back (disk full, I/O error)
    /// undoes the changes before it, and the changes queued behind it must not run
    /// outside the group, where each would commit on its own while its caller hears that
    /// the group failed; they go into the next group instead. Without savepoints, a
    /// change that fails after writing rolls the group back: alone, or first, it is
    /// told its error and the rest go into the next group; after others, the group is
    /// ``GroupEnd/undone``, no caller told anything, to run again with savepoints.
    private func commitGroup(_ jobs: ArraySlice<Job>, savepoints: Bool) -> GroupEnd {
        let connection = box.connection
        let configs = group.configs
        var committed = false
        defer { if !committed || configs.rows.count > Self.keptConfigs { configs.forget() } }
        do {
            try connection.run(Self.begin)
            let version = try connection.first(Self.dataVersion) { $0.integer(0) }
            if version == nil || version != group.dataVersion { configs.forget() }
            group.dataVersion = version
        } catch {
            if connection.inTransaction { _ = try? connection.run("ROLLBACK") }
            for job in jobs { job.fail(error) }
            return .finished(notRun: [])
        }
        var completions: [@Sendable ((any Error)?) -> Void] = []
        var notRun: ArraySlice<Job> = []
        var commitError: (any Error)?
        for (index, job) in zip(jobs.indices, jobs) {
            guard connection.inTransaction else {
                notRun = jobs[index...]
                break
            }
            if !job.changesKeys {
                // Any other write sees the table as the changes before it left it, and may
                // change it: the changes after it read the rows again.
                do {
                    try configs.write(connection)
                } catch {
                    commitError = error
                    notRun = jobs[index...]
                    break
                }
                configs.forget()
            }
            let changes = connection.totalChanges
            let ran = job.run(connection, configs, savepoints)
            if !ran.succeeded, !savepoints, connection.inTransaction, connection.totalChanges != changes {
                // What it wrote is undone with the group; what the changes before it wrote
                // too, so they run again, each in a savepoint.
                _ = try? connection.run("ROLLBACK")
                guard completions.isEmpty else { return .undone }
                ran.complete(nil)
                return .finished(notRun: jobs[(index + 1)...])
            }
            completions.append(ran.complete)
        }
        if commitError == nil, !connection.inTransaction {
            commitError = Self.groupLost(connection.path)
        } else if commitError == nil {
            do {
                try configs.write(connection)
                try connection.run(SQLiteStatement.commit)
                committed = true
                let syncs = connection.logCalls.syncs
                stats.withLock {
                    $0.record(changes: completions.count)
                    $0.syncs = syncs
                }
                checkpointer.committed(changes: completions.count)
            } catch {
                commitError = error
            }
        }
        if commitError != nil, connection.inTransaction { _ = try? connection.run("ROLLBACK") }
        for complete in completions { complete(commitError) }
        return .finished(notRun: notRun)
    }

    /// The error for changes of a group SQLite rolled back.
    private static func groupLost(_ path: String) -> DiscfgError {
        DiscfgError(.unavailable, "SQLite store \(path): a write failed (the disk may be full or failing) and was undone with the changes made alongside it; nothing of them was kept", field: "store")
    }
}
