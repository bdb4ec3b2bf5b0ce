import Dispatch
import DiscfgCore
import Synchronization

/// Copies the write-ahead log back into the database file on a thread of its own, so no
/// commit waits for a checkpoint (SQLite's automatic checkpoint is off on the writer).
///
/// The writer reports the changes it commits; past ``changesPerCheckpoint`` (a few pages
/// each: the key, its history, the config's revision) a passive checkpoint runs on a
/// connection of its own, alongside further commits, copying their pages into the
/// database file. Under a steady stream of writes the log never ends fully copied at a
/// moment when a new write could start it over, so once it holds ``restartPages`` a
/// checkpoint that does start it over runs: by then the passive ones have copied nearly
/// everything, so the writes it holds back wait only for the last few pages and for
/// readers to move on. `journal_size_limit` then trims the file.
final class SQLiteCheckpointer: Sendable {
    /// Changes after which a checkpoint runs: a few hundred log pages.
    static let changesPerCheckpoint = 100
    /// Log pages (4 KiB each) after which the checkpoint starts the log over.
    static let restartPages = 1000

    private struct State {
        var pendingChanges = 0
        var running = false
        var connection: ConnectionBox?
    }

    private let path: String
    private let thread = DispatchQueue(label: "discfg.sqlite.checkpoint", qos: .utility)
    private let state = Mutex(State())

    init(path: String) {
        self.path = path
    }

    /// Notes `changes` more changes in the log; starts a checkpoint when enough have gathered.
    func committed(changes: Int) {
        let start = state.withLock { state in
            state.pendingChanges += changes
            guard !state.running, state.pendingChanges >= Self.changesPerCheckpoint else { return false }
            state.running = true
            state.pendingChanges = 0
            return true
        }
        if start { thread.async { [self] in checkpoint() } }
    }

    private func checkpoint() {
        let box = state.withLock { $0.connection }
        do {
            let connection = try box ?? ConnectionBox(SQLiteConnection(path: path, create: false))
            // Rows: busy, pages in the log, pages copied back.
            let log = try connection.connection.first("PRAGMA wal_checkpoint(PASSIVE)", [], { $0.integer(1) }) ?? 0
            if log >= Self.restartPages {
                _ = try connection.connection.first("PRAGMA wal_checkpoint(RESTART)", [], { $0.integer(1) })
            }
            state.withLock { state in
                state.connection = connection
                state.running = false
            }
        } catch {
            // Tried again after the next changes; commits never depend on it.
            state.withLock { state in
                state.connection = nil
                state.running = false
            }
        }
    }
}
