#ifndef DISCFG_SQLITE_LOG_H
#define DISCFG_SQLITE_LOG_H

#include <sqlite3.h>

/// Makes SQLite's default file system one that can gather a connection's writes to its
/// write-ahead log in memory and hand them to the kernel in one call when the log is
/// synced, in place of two calls per page (a frame's header, then its page). The
/// default stays as it was for every connection that does not ask
/// (`discfg_sqlite3_gather_log_writes`). Call before the process opens a database; later
/// calls return the first one's result.
int discfg_sqlite3_register_log_vfs(void);

/// Asks that `db`'s writes to the log of its main database be gathered until the log is
/// synced. Only for a connection whose commits sync the log (`synchronous=FULL`): SQLite
/// makes a commit visible to other connections after that sync, so nothing unwritten is
/// ever visible. Returns SQLITE_NOTFOUND when the file system is not the one above.
int discfg_sqlite3_gather_log_writes(sqlite3 *db);

/// What a connection did to the log of its main database since it opened.
typedef struct DiscfgLogCalls {
    /// Syncs of the log.
    sqlite3_uint64 syncs;
    /// Writes handed to the platform's file system, each one call to the kernel.
    sqlite3_uint64 writes;
} DiscfgLogCalls;

/// What `db` did to its log (zeros when the file system is not the one above).
DiscfgLogCalls discfg_sqlite3_log_calls(sqlite3 *db);

#endif
