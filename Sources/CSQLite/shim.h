#include <sqlite3.h>

/// Turns off SQLite's count of the memory it holds, which takes a process-wide lock on
/// every allocation and free; nothing reads it. `sqlite3_config` is variadic, which Swift
/// cannot call, and it works only before SQLite's first use in the process.
static inline int discfg_sqlite3_skip_memory_counts(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
