import Dispatch
import DiscfgCore
import Foundation
import Synchronization

/// Makes committed groups durable on a thread of its own, so the writer runs the next
/// group while the last one's log is being synced.
///
/// The writer's connection commits with `synchronous=NORMAL`: a commit writes its pages
/// to the write-ahead log without waiting for the disk. Its callers are told only after
/// this syncer's `fsync` of the log, begun after the commit, has returned, so every
/// acknowledged change is on disk, as with `synchronous=FULL`, and a crash or power loss
/// can take only changes nobody was told of. Groups that finish while a sync runs share
/// the next one.
final class SQLiteLogSyncer: Sendable {
    typealias Completion = @Sendable ((any Error)?) -> Void

    private struct State {
        var waiting: [[Completion]] = []
        var syncing = false
        /// Told once no sync is running or waiting.
        var idleWaiters: [@Sendable () -> Void] = []
        var descriptor: Int32 = -1
        var syncs: UInt64 = 0
    }

    private let logPath: String
    private let thread = DispatchQueue(label: "discfg.sqlite.sync", qos: .userInitiated)
    private let state = Mutex(State())

    init(databasePath: String) {
        logPath = databasePath + "-wal"
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 { close(descriptor) }
    }

    /// Syncs made so far.
    var syncs: UInt64 { state.withLock { $0.syncs } }

    /// Tells `completions` the outcome once the log, as it is now, is on disk.
    func afterSync(_ completions: [Completion]) {
        let start = state.withLock { state in
            state.waiting.append(completions)
            defer { state.syncing = true }
            return !state.syncing
        }
        if start { thread.async { [self] in drain() } }
    }

    /// Runs `body` once no sync is running or waiting, and returns true; or returns
    /// false at once, without running it, when the log is idle now.
    func whenBusyWaitForIdle(_ body: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.syncing else { return false }
            state.idleWaiters.append(body)
            return true
        }
    }

    private func drain() {
        while true {
            let (groups, idle) = state.withLock { state -> ([[Completion]], [@Sendable () -> Void]) in
                defer { state.waiting.removeAll(keepingCapacity: true) }
                guard state.waiting.isEmpty else { return (state.waiting, []) }
                state.syncing = false
                defer { state.idleWaiters = [] }
                return ([], state.idleWaiters)
            }
            if groups.isEmpty {
                for body in idle { body() }
                return
            }
            let error = sync()
            for group in groups {
                for complete in group { complete(error) }
            }
        }
    }

    /// Syncs the log file; nil when it is on disk.
    private func sync() -> (any Error)? {
        var descriptor = state.withLock { $0.descriptor }
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
                state.withLock { state in
                    state.descriptor = descriptor
                    state.syncs += 1
                }
                return nil
            }
            failure = errno
            close(descriptor)
            descriptor = -1
        }
        state.withLock { $0.descriptor = -1 }
        return DiscfgError(
            .unavailable,
            "SQLite store: committed changes could not be made durable (fsync of \(logPath): \(String(cString: strerror(failure)))); they may be lost if the machine fails",
            field: "store"
        )
    }
}
