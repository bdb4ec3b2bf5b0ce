// A file system for SQLite that wraps the platform's and changes one thing: a connection
// that asks for it gathers the frames it appends to its write-ahead log in memory and
// writes them in one call before anything else touches that log (a sync, a read, a
// truncation, a close, a write elsewhere in it) or the shared index that makes frames
// visible. SQLite writes a frame as two calls (its 24-byte header, then the page), so a
// commit of n pages costs the kernel 2n writes; gathered, it costs one.
//
// Why nothing unwritten can be seen: readers find frames through the shared index, and
// a connection that syncs at commit (synchronous=FULL) publishes a commit there only
// after syncing the log, when the gathered frames have been written. Reads by the
// connection itself (of frames spilled before its commit) write the frames first. Every
// other file, and every connection that did not ask, is passed through untouched.

#include "sqlite_log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/// The file-control operation by which a connection asks to gather its log's writes,
/// and the one that reads what it did to its log; far above SQLite's own.
enum {
    GATHER_LOG_WRITES = 0x64630001,
    COUNT_LOG_CALLS = 0x64630002,
};

/// At most this many bytes are gathered into one write: the platform's file system
/// writes at most 128 KiB - 1 per call and answers a longer write as a full disk.
/// (31 frames of 4 KiB pages.)
static const int gather_limit = 0x1ffff;

typedef struct LogFile LogFile;

struct LogFile {
    sqlite3_file base;
    /// The platform's file, allocated just after this struct.
    sqlite3_file *real;
    /// For a database: whether its connection asked to gather, its open log, and the
    /// syncs of its logs and the writes they handed to the platform.
    int gather;
    LogFile *log;
    DiscfgLogCalls calls;
    /// For a log: its database (while both are open), and the frames gathered so far,
    /// which belong at `start` and are contiguous.
    LogFile *database;
    unsigned char *pending;
    sqlite3_int64 start;
    int length;
};

static sqlite3_vfs *platform;

static int write_through(LogFile *file, const void *data, int amount, sqlite3_int64 offset) {
    if (file->database) file->database->calls.writes += 1;
    return file->real->pMethods->xWrite(file->real, data, amount, offset);
}

/// Writes what `file` has gathered; afterwards nothing is pending, even on failure.
static int write_pending(LogFile *file) {
    if (file->length == 0) return SQLITE_OK;
    int length = file->length;
    file->length = 0;
    return write_through(file, file->pending, length, file->start);
}

static int log_close(sqlite3_file *base) {
    LogFile *file = (LogFile *)base;
    int status = write_pending(file);
    if (file->database) file->database->log = NULL;
    if (file->log) file->log->database = NULL;
    free(file->pending);
    file->pending = NULL;
    int closed = file->real->pMethods ? file->real->pMethods->xClose(file->real) : SQLITE_OK;
    return status != SQLITE_OK ? status : closed;
}

static int log_read(sqlite3_file *base, void *buffer, int amount, sqlite3_int64 offset) {
    LogFile *file = (LogFile *)base;
    int status = write_pending(file);
    if (status != SQLITE_OK) return status;
    return file->real->pMethods->xRead(file->real, buffer, amount, offset);
}

static int gathering(const LogFile *file) {
    return file->database != NULL && file->database->gather;
}

static int log_write(sqlite3_file *base, const void *data, int amount, sqlite3_int64 offset) {
    LogFile *file = (LogFile *)base;
    if (!gathering(file)) {
        int status = write_pending(file);
        if (status != SQLITE_OK) return status;
        return write_through(file, data, amount, offset);
    }
    int appends = file->length > 0 && offset == file->start + file->length;
    if (!appends || file->length + amount > gather_limit) {
        int status = write_pending(file);
        if (status != SQLITE_OK) return status;
        file->start = offset;
    }
    if (amount > gather_limit) return write_through(file, data, amount, offset);
    if (file->pending == NULL) {
        // Nothing is gathered yet: without memory, the write goes straight through.
        file->pending = malloc(gather_limit);
        if (file->pending == NULL) return write_through(file, data, amount, offset);
    }
    memcpy(file->pending + file->length, data, (size_t)amount);
    file->length += amount;
    return SQLITE_OK;
}

static int log_truncate(sqlite3_file *base, sqlite3_int64 size) {
    LogFile *file = (LogFile *)base;
    int status = write_pending(file);
    if (status != SQLITE_OK) return status;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int log_sync(sqlite3_file *base, int flags) {
    LogFile *file = (LogFile *)base;
    int status = write_pending(file);
    if (status != SQLITE_OK) return status;
    status = file->real->pMethods->xSync(file->real, flags);
    if (status == SQLITE_OK && file->database) file->database->calls.syncs += 1;
    return status;
}

static int log_file_size(sqlite3_file *base, sqlite3_int64 *size) {
    LogFile *file = (LogFile *)base;
    int status = write_pending(file);
    if (status != SQLITE_OK) return status;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int log_lock(sqlite3_file *base, int level) {
    LogFile *file = (LogFile *)base;
    return file->real->pMethods->xLock(file->real, level);
}

static int log_unlock(sqlite3_file *base, int level) {
    LogFile *file = (LogFile *)base;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int log_check_reserved_lock(sqlite3_file *base, int *reserved) {
    LogFile *file = (LogFile *)base;
    return file->real->pMethods->xCheckReservedLock(file->real, reserved);
}

static int log_file_control(sqlite3_file *base, int operation, void *argument) {
    LogFile *file = (LogFile *)base;
    switch (operation) {
    case GATHER_LOG_WRITES:
        file->gather = 1;
        return SQLITE_OK;
    case COUNT_LOG_CALLS:
        *(DiscfgLogCalls *)argument = file->calls;
        return SQLITE_OK;
    default: {
        int status = write_pending(file);
        if (status != SQLITE_OK) return status;
        return file->real->pMethods->xFileControl(file->real, operation, argument);
    }
    }
}

static int log_sector_size(sqlite3_file *base) {
    LogFile *file = (LogFile *)base;
    return file->real->pMethods->xSectorSize(file->real);
}

static int log_device_characteristics(sqlite3_file *base) {
    LogFile *file = (LogFile *)base;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

/// The shared index lives beside the database; before SQLite touches it, the log's
/// gathered frames are written, so no frame it points to is missing from the file.
static void write_log_of(LogFile *database) {
    if (database->log) (void)write_pending(database->log);
}

static int log_shm_map(sqlite3_file *base, int page, int size, int extend, void volatile **memory) {
    LogFile *file = (LogFile *)base;
    write_log_of(file);
    return file->real->pMethods->xShmMap(file->real, page, size, extend, memory);
}

static int log_shm_lock(sqlite3_file *base, int offset, int count, int flags) {
    LogFile *file = (LogFile *)base;
    write_log_of(file);
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void log_shm_barrier(sqlite3_file *base) {
    LogFile *file = (LogFile *)base;
    write_log_of(file);
    file->real->pMethods->xShmBarrier(file->real);
}

static int log_shm_unmap(sqlite3_file *base, int delete) {
    LogFile *file = (LogFile *)base;
    write_log_of(file);
    return file->real->pMethods->xShmUnmap(file->real, delete);
}

static int log_fetch(sqlite3_file *base, sqlite3_int64 offset, int amount, void **page) {
    LogFile *file = (LogFile *)base;
    return file->real->pMethods->xFetch(file->real, offset, amount, page);
}

static int log_unfetch(sqlite3_file *base, sqlite3_int64 offset, void *page) {
    LogFile *file = (LogFile *)base;
    return file->real->pMethods->xUnfetch(file->real, offset, page);
}

static const sqlite3_io_methods log_methods = {
    3,
    log_close,
    log_read,
    log_write,
    log_truncate,
    log_sync,
    log_file_size,
    log_lock,
    log_unlock,
    log_check_reserved_lock,
    log_file_control,
    log_sector_size,
    log_device_characteristics,
    log_shm_map,
    log_shm_lock,
    log_shm_barrier,
    log_shm_unmap,
    log_fetch,
    log_unfetch,
};

static int vfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *base, int flags, int *flags_out) {
    (void)vfs;
    LogFile *file = (LogFile *)base;
    memset(file, 0, sizeof(LogFile));
    file->real = (sqlite3_file *)(file + 1);
    int status = platform->xOpen(platform, name, file->real, flags, flags_out);
    if (status != SQLITE_OK) {
        // SQLite calls xClose only when pMethods is set; the platform's own file may
        // still need closing.
        if (file->real->pMethods) file->real->pMethods->xClose(file->real);
        return status;
    }
    if (file->real->pMethods->iVersion < 3) {
        file->real->pMethods->xClose(file->real);
        return SQLITE_CANTOPEN;
    }
    if ((flags & SQLITE_OPEN_WAL) && name != NULL) {
        sqlite3_file *database = sqlite3_database_file_object(name);
        if (database != NULL && database->pMethods == &log_methods) {
            LogFile *owner = (LogFile *)database;
            file->database = owner;
            owner->log = file;
        }
    }
    base->pMethods = &log_methods;
    return SQLITE_OK;
}

static int vfs_delete(sqlite3_vfs *vfs, const char *name, int sync_directory) {
    (void)vfs;
    return platform->xDelete(platform, name, sync_directory);
}

static int vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return platform->xAccess(platform, name, flags, result);
}

static int vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return platform->xFullPathname(platform, name, size, out);
}

static void *vfs_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return platform->xDlOpen(platform, name);
}

static void vfs_dl_error(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    platform->xDlError(platform, size, message);
}

static void (*vfs_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return platform->xDlSym(platform, handle, symbol);
}

static void vfs_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    platform->xDlClose(platform, handle);
}

static int vfs_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return platform->xRandomness(platform, size, out);
}

static int vfs_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return platform->xSleep(platform, microseconds);
}

static int vfs_current_time(sqlite3_vfs *vfs, double *now) {
    (void)vfs;
    return platform->xCurrentTime(platform, now);
}

static int vfs_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return platform->xGetLastError ? platform->xGetLastError(platform, size, out) : 0;
}

static int vfs_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    return platform->xCurrentTimeInt64(platform, now);
}

static sqlite3_vfs log_vfs = {
    2,
    0,
    1024,
    NULL,
    "discfg-log",
    NULL,
    vfs_open,
    vfs_delete,
    vfs_access,
    vfs_full_pathname,
    vfs_dl_open,
    vfs_dl_error,
    vfs_dl_sym,
    vfs_dl_close,
    vfs_randomness,
    vfs_sleep,
    vfs_current_time,
    vfs_get_last_error,
    vfs_current_time_int64,
    NULL,
    NULL,
    NULL,
};

static pthread_once_t registration = PTHREAD_ONCE_INIT;
static int registered = SQLITE_ERROR;

static void register_once(void) {
    sqlite3_vfs *found = sqlite3_vfs_find(NULL);
    if (found == NULL || found->iVersion < 2 || found->xCurrentTimeInt64 == NULL) return;
    platform = found;
    log_vfs.szOsFile = (int)sizeof(LogFile) + found->szOsFile;
    log_vfs.mxPathname = found->mxPathname;
    registered = sqlite3_vfs_register(&log_vfs, 1);
}

int discfg_sqlite3_register_log_vfs(void) {
    pthread_once(&registration, register_once);
    return registered;
}

int discfg_sqlite3_gather_log_writes(sqlite3 *db) {
    return sqlite3_file_control(db, "main", GATHER_LOG_WRITES, NULL);
}

DiscfgLogCalls discfg_sqlite3_log_calls(sqlite3 *db) {
    DiscfgLogCalls calls = {0, 0};
    if (sqlite3_file_control(db, "main", COUNT_LOG_CALLS, &calls) != SQLITE_OK) return (DiscfgLogCalls){0, 0};
    return calls;
}
