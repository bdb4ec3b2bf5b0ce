import DiscfgCore
import Foundation
import Synchronization

/// Makes committed groups durable: an `fsync` of the write-ahead log, run by the writer
/// right after each group's commit and before any caller in the group is told.
///
/// The writer's connection commits with `synchronous=NORMAL`: a commit writes its pages
/// to the log without waiting for the disk. Its callers are told only after this sync,
/// begun after the commit, has returned, so every acknowledged change is on disk, as with
/// `synchronous=FULL`, and a crash or power loss can take only changes nobody was told
/// of. The sync runs on the writer's own thread: changes that arrive meanwhile could not
/// be acknowledged before the next sync anyway, so they wait and go into the next group
/// together, and no thread hands work to another on the commit path.
final class SQLiteLogSyncer: Sendable {
    private let logPath: String
    /// The log's open descriptor, or -1; only the writer's thread (and deinit) uses it.
    private let descriptor = Atomic<Int32>(-1)
    private let syncCount = Atomic<UInt64>(0)

    init(databasePath: String) {
        logPath = databasePath + "-wal"
    }

    deinit {
        let descriptor = descriptor.load(ordering: .relaxed)
        if descriptor >= 0 { close(descriptor) }
    }

    /// Syncs made so far.
    var syncs: UInt64 { syncCount.load(ordering: .relaxed) }

    /// Syncs the log file as it is now; nil once it is on disk. Called by the writer only.
    func sync() -> (any Error)? {
        var descriptor = descriptor.load(ordering: .relaxed)
        var failure: Int32 = 0
        for _ in 0..<2 {
            if descriptor < 0 {
                descriptor = open(logPath, O_RDONLY | O_CLOEXEC)
                if descriptor < 0 {
                    failure = errno
                    continue
                }
            }
            var status: Int32
            repeat { status = fsync(descriptor) } while status != 0 && errno == EINTR
            if status == 0 {
                self.descriptor.store(descriptor, ordering: .relaxed)
                syncCount.add(1, ordering: .relaxed)
                return nil
            }
            failure = errno
            close(descriptor)
            descriptor = -1
        }
        self.descriptor.store(-1, ordering: .relaxed)
        return DiscfgError(
            .unavailable,
            "SQLite store: committed changes could not be made durable (fsync of \(logPath): \(String(cString: strerror(failure)))); they may be lost if the machine fails",
            field: "store"
        )
    }
}
