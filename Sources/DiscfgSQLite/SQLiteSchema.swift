import DiscfgCore
import Foundation

/// The SQLite store's tables, created or migrated when a file is opened.
///
/// Times are whole milliseconds since 1970; revisions and versions are integers.
/// History rows carry the item before the change, so a read at a past revision and an
/// event's `prevItem` survive compaction of older rows. Each key's events are linked
/// newest to oldest through their rows (``SQLiteKeyChain``) rather than by an index, so
/// a change writes no page it does not have to.
enum SQLiteSchema {
    static let version = 12

    static let create = """
    CREATE TABLE IF NOT EXISTS configs (
        name TEXT PRIMARY KEY,
        revision INTEGER NOT NULL DEFAULT 0,
        compacted_revision INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        modified_at INTEGER NOT NULL,
        settings TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS kv (
        config TEXT NOT NULL,
        key TEXT NOT NULL,
        value BLOB NOT NULL,
        content_type TEXT,
        version INTEGER NOT NULL,
        create_revision INTEGER NOT NULL,
        mod_revision INTEGER NOT NULL,
        modified_at INTEGER NOT NULL,
        expires_at INTEGER,
        PRIMARY KEY (config, key)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS kv_expiry ON kv (expires_at, config) WHERE expires_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS history (
        config TEXT NOT NULL,
        revision INTEGER NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        at INTEGER NOT NULL,
        value BLOB,
        content_type TEXT,
        version INTEGER,
        create_revision INTEGER,
        expires_at INTEGER,
        prev_value BLOB,
        prev_content_type TEXT,
        prev_version INTEGER,
        prev_create_revision INTEGER,
        prev_mod_revision INTEGER,
        prev_modified_at INTEGER,
        prev_expires_at INTEGER,
        PRIMARY KEY (config, revision)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS history_by_key ON history (config, key, revision);
    """

    /// A step from one version to the next.
    enum Migration {
        case sql(String)
        case code(@Sendable (SQLiteConnection) throws -> Void)
    }

    /// Migrations from each version to the next, in order; `migrations[0]` makes a new file.
    static let migrations: [Migration] = [
        .sql(create), .sql(tokens), .sql(tokenHistory), .sql(historyPositions), .sql(keyCounts), .code(linkKeyChains), .sql(byteCounts),
        .sql(attribution), .sql(leases), .code(addLeaseOwners), .sql(healthReports), .code(addNewestLinks),
    ]

    /// `configs` holds a JSON array of the token's scopes (`demo`, `demo:/app/`,
    /// `demo:etcd:/registry/`); a bare config name, all a row held before prefix scopes,
    /// is the whole config, so those rows need no migration.
    static let tokens = """
    CREATE TABLE IF NOT EXISTS tokens (
        id TEXT PRIMARY KEY,
        hash BLOB NOT NULL,
        role TEXT NOT NULL,
        configs TEXT,
        description TEXT,
        created_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    """

    /// One row once any token was saved, kept when tokens are revoked; a file that
    /// already holds tokens gets it at once.
    static let tokenHistory = """
    CREATE TABLE IF NOT EXISTS token_history (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        first_issued_at INTEGER NOT NULL
    );
    INSERT OR IGNORE INTO token_history (id, first_issued_at) SELECT 1, min(created_at) FROM tokens HAVING count(*) > 0;
    """

    /// A transaction's changes share one revision, so history rows are keyed by revision
    /// and their position in it (`sub`, 0 for the first or only change).
    static let historyPositions = """
    CREATE TABLE history_v4 (
        config TEXT NOT NULL,
        revision INTEGER NOT NULL,
        sub INTEGER NOT NULL DEFAULT 0,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        at INTEGER NOT NULL,
        value BLOB,
        content_type TEXT,
        version INTEGER,
        create_revision INTEGER,
        expires_at INTEGER,
        prev_value BLOB,
        prev_content_type TEXT,
        prev_version INTEGER,
        prev_create_revision INTEGER,
        prev_mod_revision INTEGER,
        prev_modified_at INTEGER,
        prev_expires_at INTEGER,
        PRIMARY KEY (config, revision, sub)
    ) WITHOUT ROWID;
    INSERT INTO history_v4 (config, sub, \(columnsBeforeHistoryPositions)) SELECT config, 0, \(columnsBeforeHistoryPositions) FROM history;
    DROP TABLE history;
    ALTER TABLE history_v4 RENAME TO history;
    CREATE INDEX history_by_key ON history (config, key, revision);
    """

    /// The event columns of history at schema 3, which ``historyPositions`` copies.
    static let columnsBeforeHistoryPositions = """
    revision, kind, key, at, value, content_type, version, create_revision, expires_at, \
    prev_value, prev_content_type, prev_version, prev_create_revision, prev_mod_revision, prev_modified_at, prev_expires_at
    """

    /// Who made each change (`by_kind`, `by_id`, `by_description`) and why (`message`),
    /// on every history row of its revision, written in the change's transaction. Rows
    /// from before are left without, and read back as unknown.
    static let attribution = """
    ALTER TABLE history ADD COLUMN by_kind TEXT;
    ALTER TABLE history ADD COLUMN by_id TEXT;
    ALTER TABLE history ADD COLUMN by_description TEXT;
    ALTER TABLE history ADD COLUMN message TEXT;
    """

    /// Each config's etcd leases, apart from its keys and revisions: `ttl` in seconds,
    /// `expires_at` in milliseconds, `revoking` 1 once claimed by a revocation. Deleting
    /// a config deletes its rows in the same transaction.
    static let leases = """
    CREATE TABLE IF NOT EXISTS leases (
        config TEXT NOT NULL,
        id INTEGER NOT NULL,
        ttl INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        revoking INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (config, id)
    ) WITHOUT ROWID;
    """

    /// Each running deployment's health reports, one per reporter (``HealthReport`` as
    /// JSON in `report`), apart from keys and history: a report makes no revision.
    /// Deleting a config deletes its rows in the same transaction.
    static let healthReports = """
    CREATE TABLE IF NOT EXISTS health_reports (
        config TEXT NOT NULL,
        deployment TEXT NOT NULL,
        reporter TEXT NOT NULL,
        report TEXT NOT NULL,
        PRIMARY KEY (config, deployment, reporter)
    ) WITHOUT ROWID;
    """

    /// Who granted each lease: the principal's kind and id, and the JSON array of the
    /// scopes' text it granted it by (NULL: the whole config). Leases granted before are
    /// left without an owner, and read back as such.
    static let leaseOwnerColumns = ["owner_kind", "owner_id", "owner_scopes"]

    /// Adds the owner columns the leases table lacks: the leases table is made with
    /// `IF NOT EXISTS`, so a file whose table already has some of them (made by a newer
    /// discfg, its version set back) gets only the others.
    @Sendable static func addLeaseOwners(_ connection: SQLiteConnection) throws {
        try addMissingColumns(leaseOwnerColumns, type: "TEXT", to: "leases", connection)
    }

    /// Adds those of `columns` that `table` lacks: a file made by a newer discfg, its
    /// version set back, already has them.
    private static func addMissingColumns(_ columns: [String], type: String, to table: String, _ connection: SQLiteConnection) throws {
        let present = Set(try connection.query("SELECT name FROM pragma_table_info('\(table)')") { $0.text(0) })
        for column in columns where !present.contains(column) {
            try connection.execute("ALTER TABLE \(table) ADD COLUMN \(column) \(type)")
        }
    }

    /// Each config counts its keys, kept by every change in the same transaction.
    static let keyCounts = """
    ALTER TABLE configs ADD COLUMN key_count INTEGER NOT NULL DEFAULT 0;
    UPDATE configs SET key_count = (SELECT count(*) FROM kv WHERE kv.config = configs.name);
    """

    /// Each config counts the bytes of its keys' paths and values (what its quota
    /// bounds), kept by every change in the same transaction; a file from before is
    /// counted here, once, so every config's count is known.
    static let byteCounts = """
    ALTER TABLE configs ADD COLUMN byte_count INTEGER NOT NULL DEFAULT 0;
    UPDATE configs SET byte_count = (SELECT coalesce(sum(length(CAST(key AS BLOB)) + length(value)), 0) FROM kv WHERE kv.config = configs.name);
    """

    /// Each key's events link to the one before (`prev_*`) and to one further back
    /// (`jump_*`), the newest found from the key's row or, once deleted, its tombstone;
    /// this replaces the index of history by key, which cost every change a page write.
    /// Existing history is linked key by key, walking that index one last time.
    static let keyChainColumns = """
    ALTER TABLE kv ADD COLUMN mod_sub INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE history ADD COLUMN seq INTEGER;
    ALTER TABLE history ADD COLUMN prev_revision INTEGER;
    ALTER TABLE history ADD COLUMN prev_sub INTEGER;
    ALTER TABLE history ADD COLUMN jump_revision INTEGER;
    ALTER TABLE history ADD COLUMN jump_sub INTEGER;
    ALTER TABLE history ADD COLUMN jump_seq INTEGER;
    CREATE TABLE tombstones (
        config TEXT NOT NULL,
        key TEXT NOT NULL,
        revision INTEGER NOT NULL,
        sub INTEGER NOT NULL,
        PRIMARY KEY (config, key)
    ) WITHOUT ROWID;
    CREATE INDEX tombstones_by_revision ON tombstones (config, revision);
    """

    /// A key's row carries its newest event's links, as that event's history row holds
    /// them, so a change finds them with the item it reads anyway, not by reading the
    /// history row too. Rows written before are left without (`seq` NULL): their links
    /// are read from history until the key's next change writes them. The names as
    /// ``SQLiteKeyChain/columnNames`` gave them at schema 12, kept here as the step made them.
    static let newestLinkColumns = ["seq", "prev_revision", "prev_sub", "jump_revision", "jump_sub", "jump_seq"]

    @Sendable static func addNewestLinks(_ connection: SQLiteConnection) throws {
        try addMissingColumns(newestLinkColumns, type: "INTEGER", to: "kv", connection)
    }

    /// Linking takes about 4 s per 100,000 history rows on a small machine; past that
    /// many, the wait is announced on standard error.
    static let announcedLinkRows: Int64 = 100_000

    @Sendable static func linkKeyChains(_ connection: SQLiteConnection) throws {
        try connection.execute(keyChainColumns)
        let rows = try connection.first("SELECT count(*) FROM history") { $0.integer(0) } ?? 0
        if rows >= announcedLinkRows {
            FileHandle.standardError.write(Data("discfg: upgrading \(connection.path) to schema \(version): linking \(rows) history rows, once (about 4 s per 100,000)\n".utf8))
        }
        try SQLiteKeyChain.linkExisting(connection)
        try connection.execute("DROP INDEX history_by_key")
    }

    /// Creates the tables on a new file; refuses a file written by a newer discfg.
    static func migrate(_ connection: SQLiteConnection) throws {
        let current = try connection.first("PRAGMA user_version") { $0.integer(0) } ?? 0
        guard current <= version else {
            throw DiscfgError(.unavailable, "SQLite store \(connection.path) has schema version \(current); this discfg understands up to \(version) — upgrade discfg", field: "store")
        }
        guard current < version else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for migration in migrations[Int(current)...] {
                switch migration {
                case .sql(let sql): try connection.execute(sql)
                case .code(let body): try body(connection)
                }
            }
            try connection.execute("PRAGMA user_version = \(version)")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}

