import CSQLite
import DiscfgConformance
import DiscfgCore
import DiscfgSQLite
import Foundation
import Testing

/// What only the SQLite store promises: several instances (processes) on one file, and
/// durability across reopening.
@Suite("SQLite file")
struct SQLiteFileTests {
    /// A temporary directory, removed when the test is done.
    static func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-sqlite-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// Runs `sql` on the file at `path` through a connection of its own, as an older
    /// discfg's file is made from a new one: a migration test sets its version back so.
    static func rewrite(_ path: String, _ sql: String) {
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        // The store just closed may still hold the file a moment (its writer closes on its own thread).
        sqlite3_busy_timeout(handle, 10_000)
        #expect(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK, "\(String(cString: sqlite3_errmsg(handle)))")
    }

    @Test("a new store's folders are 0700 and its file, -wal and -shm 0600, whatever the umask lets by")
    func newFilesArePrivate() async throws {
        try await Self.withDirectory { directory in
            let previous = umask(0o022)
            defer { umask(previous) }
            let folder = directory.appendingPathComponent("a/b", isDirectory: true)
            let path = folder.appendingPathComponent("store.db").path
            let store = try SQLiteStore(path: path)
            try await store.set("/secret", "s3cr3t", in: try await store.makeConfig("c"))
            func mode(_ path: String) throws -> Int {
                try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
            }
            #expect(try mode(directory.appendingPathComponent("a").path) == 0o700)
            #expect(try mode(folder.path) == 0o700)
            for file in [path, path + "-wal", path + "-shm"] {
                let actual = try mode(file)
                #expect(actual == 0o600, "\(file) is \(String(actual, radix: 8))")
            }
        }
    }

    @Test("concurrent changes share group commits, each with a sync of the log, and every change is counted once")
    func groupCommits() async throws {
        try await Self.withDirectory { directory in
            let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
            let config = try await store.makeConfig("c")
            let before = store.groupCommits
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask { _ = try await store.set(try Key("/k\(index % 20)"), to: Data("v\(index)".utf8), in: config) }
                }
                try await group.waitForAll()
            }
            let after = store.groupCommits
            #expect(after.changes - before.changes == 200)
            #expect(after.commits - before.commits <= 200)
            #expect(after.batches.reduce(0, +) == after.commits)
            // Every commit synced the log before its changes were acknowledged (a log that
            // starts over syncs its header too).
            #expect(after.syncs - before.syncs >= after.commits - before.commits)
            #expect(try await store.configInfo(config).revision == Revision(200))
        }
    }

    /// A group's changes of keys keep their config's row in memory and write it once
    /// before the commit; changes that fail, settings updates, compactions and deletes of
    /// missing keys in the same groups must leave every row as if each change ran alone.
    @Test("changes in one group share their config's row: revisions, key counts, times and history are as if each ran alone, also after reopening")
    func groupsShareConfigRows() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("store.db").path
            let store = try SQLiteStore(path: path)
            let configs = [try await store.makeConfig("a"), try await store.makeConfig("b")]
            let before = store.groupCommits
            enum Outcome: Sendable { case changed(ConfigName), refused, other }
            let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
                for index in 0..<400 {
                    let config = configs[index % 2]
                    group.addTask {
                        do {
                            // Each config gets every kind of write, interleaved with the other's.
                            switch index / 2 % 10 {
                            case 3:
                                _ = try await store.set(try Key("/k\(index % 7)"), to: Data("x".utf8), in: config, options: SetOptions(conditions: [.version(999)]))
                            case 5:
                                _ = try await store.updateConfig(config, ConfigSettingsPatch(description: "update \(index)"))
                                return .other
                            case 7:
                                _ = try await store.delete(try Key("/k\(index % 7)"), in: config, conditions: [])
                            case 9:
                                _ = try await store.compact(config, through: .zero)
                                return .other
                            default:
                                _ = try await store.set(try Key("/k\(index % 7)"), to: Data("v\(index)".utf8), in: config)
                            }
                            return .changed(config)
                        } catch let error as DiscfgError where error.code == .conditionFailed || error.code == .keyNotFound {
                            return .refused
                        }
                    }
                }
                return try await group.reduce(into: [Outcome]()) { $0.append($1) }
            }
            let after = store.groupCommits
            #expect(after.batches.dropFirst().reduce(0, +) > 0, "some commits held more than one change")
            #expect(after.changes - before.changes == 400)
            let reopened = try SQLiteStore(path: path)
            for config in configs {
                let changes = outcomes.filter { if case .changed(config) = $0 { true } else { false } }.count
                let info = try await store.configInfo(config)
                #expect(info.revision == Revision(UInt64(changes)), "\(config): one revision per change that happened")
                let keys = try await store.list(in: config, ListQuery(prefix: .root, recursive: true)).items.count
                #expect(info.keyCount == keys, "\(config): the key count follows the changes")
                let events = try await store.events(in: config, scope: .prefix(.root), from: 1, limit: 1000).events
                #expect(events.map(\.revision) == (1...UInt64(changes)).map { Revision($0) }, "\(config): every revision once, in order")
                #expect(info.modifiedAt.milliseconds >= (events.last?.at.milliseconds ?? 0))
                let again = try await reopened.configInfo(config)
                #expect(again.revision == info.revision && again.keyCount == info.keyCount && again.modifiedAt == info.modifiedAt)
                #expect(again.settings.description?.hasPrefix("update ") == true)
            }
        }
    }

    @Test("the write-ahead log is checkpointed beside the commits, so it stays small under a stream of writes")
    func writeAheadLogStaysSmall() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("store.db").path
            let store = try SQLiteStore(path: path)
            let config = try await store.makeConfig("c")
            let value = Data(repeating: UInt8(ascii: "x"), count: 2048)
            var largest = 0
            for index in 0..<3000 {
                _ = try await store.set(try Key("/k\(index % 100)"), to: value, in: config)
                if index % 100 == 99 {
                    let size = try (FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
                    largest = max(largest, size)
                }
            }
            // Uncheckpointed, these 3,000 changes leave a log of over 100 MiB, growing with
            // every change; checkpointed, it is started over every few MiB. The checkpoints
            // run on a utility thread, which a loaded machine starves for a while (54 MB
            // seen in CI, beside the whole suite): the bound is what tells the two apart.
            #expect(largest < 80 * 1024 * 1024, "the log grew to \(largest) bytes")
        }
    }

    @Test("an existing folder keeps its mode")
    func existingFolderKeepsItsMode() async throws {
        try await Self.withDirectory { directory in
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
            _ = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
            #expect((try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? NSNumber)?.intValue == 0o755)
        }
    }

    /// Two store instances on one new file, as two processes have it, and a config the
    /// first made.
    static func withTwoInstances(_ body: (_ first: SQLiteStore, _ second: SQLiteStore, _ config: ConfigName) async throws -> Void) async throws {
        try await withDirectory { directory in
            let path = directory.appendingPathComponent("shared.db").path
            let clock = ManualClock()
            let first = try SQLiteStore(path: path, clock: clock)
            let second = try SQLiteStore(path: path, clock: clock)
            try await body(first, second, try await first.makeConfig("shared"))
        }
    }

    @Test func twoInstancesOnOneFileSeeEachOthersWrites() async throws {
        try await Self.withTwoInstances { first, second, config in
            #expect(try await second.configInfo(config).revision == .zero)
            try await second.set("/from/second", "2", in: config)
            try await first.set("/from/first", "1", in: config)
            #expect(try await first.get(Key("/from/second"), in: config)?.value == Data(text: "2"))
            #expect(try await second.get(Key("/from/first"), in: config)?.item(revision: 2) == true)
            #expect(try await second.revision(of: config) == 2)
            try await expectError(.configExists) { try await second.createConfig(config, settings: ConfigSettings()) }
        }
    }

    @Test("two instances on one file writing in turn: each change follows the other's revision, counts and schemas, though each keeps its config rows from one commit to the next")
    func twoInstancesWritingInTurn() async throws {
        try await Self.withTwoInstances { first, second, config in
            for round in 1...6 {
                let writer = round.isMultiple(of: 2) ? second : first
                let result = try await writer.set("/k\(round)", "v\(round)", in: config)
                #expect(result.revision == Revision(UInt64(round)), "round \(round)")
            }
            #expect(try await first.configInfo(config).keyCount == 6)
            #expect(try await second.configInfo(config).revision == 6)
            // The first instance read the config's schemas (none) with its last write; one
            // attached through the second holds for the first's next write all the same.
            try await first.set("/app/port", "8080", in: config)
            _ = try await second.setSchema(SchemaTarget("/app/port"), to: Data(#"{"type": "integer", "maximum": 65535}"#.utf8), in: config, force: false)
            await #expect(throws: DiscfgError.self) { try await first.set("/app/port", "70000", in: config) }
            #expect(try await second.get(Key("/app/port"), in: config)?.value == Data("8080".utf8))
            let revisions = try await first.events(in: config, scope: .prefix(.root), from: Revision(1), limit: 100, maxBytes: 1 << 20).events.map(\.revision)
            #expect(revisions == (1...8).map { Revision(UInt64($0)) }, "one event a revision, none written twice")
            #expect(try await first.revision(of: config) == 8, "the schema's own revision")
        }
    }

    @Test func aWatcherOnOneInstanceSeesWritesThroughAnother() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("shared.db").path
            let clock = ManualClock()
            let watched = try SQLiteStore(path: path, clock: clock)
            let writer = try SQLiteStore(path: path, clock: clock)
            let config = try await watched.makeConfig("shared")

            let live = WatchRecorder(await watched.watch(config, scope: .prefix(.root), from: nil))
            try await writer.set("/a", "1", in: config)
            try await writer.set("/b", "2", in: config)
            #expect(try await live.waitForEvents(2).map(\.revision) == [1, 2])

            let replay = try WatchRecorder(await watched.watch(config, scope: .key(Key("/b")), from: 1))
            #expect(try await replay.waitForEvents(1).map(\.revision) == [2])
            try await writer.set("/b", "3", in: config)
            #expect(try await replay.waitForEvents(2).map(\.revision) == [2, 3])
            #expect(try await live.waitForEvents(3).map(\.revision) == [1, 2, 3])

            try await writer.deleteConfig(config)
            #expect(try await live.waitForEnding().code == .configNotFound)
        }
    }

    @Test func dataSurvivesReopening() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("nested/dir/durable.db").path
            let clock = ManualClock()
            let written: Item
            let config: ConfigName
            do {
                let store = try SQLiteStore(path: path, clock: clock)
                config = try await store.makeConfig("durable", settings: ConfigSettings(history: .last(100), description: "kept"))
                try await store.set("/k", "v1", in: config)
                written = try #require(try await store.set(Key("/k"), to: Data([0, 1, 2]), in: config, options: SetOptions(ttlSeconds: 60, contentType: "application/octet-stream")).item)
            }
            let reopened = try SQLiteStore(path: path, clock: clock)
            let info = try await reopened.configInfo(config)
            #expect(info.revision == 2)
            #expect(info.settings == ConfigSettings(history: .last(100), description: "kept"))
            #expect(try await reopened.get(Key("/k"), in: config) == written)
            #expect(try await reopened.get(Key("/k"), in: config, atRevision: 1)?.value == Data(text: "v1"))
            #expect(try await reopened.fullHistory(of: Key("/k"), in: config).count == 2)
            #expect(try await reopened.set("/k", "v3", in: config).revision == 3)
        }
    }

    @Test func openingADirectoryFailsAsUnavailable() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("a-directory").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let error = try #require(throws: DiscfgError.self) { try SQLiteStore(path: path) }
            #expect(error.code == .unavailable)
            #expect(error.message.contains(path), "\(error.message)")
        }
    }

    @Test func openingAFileThatIsNotSQLiteFailsAsUnavailable() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("notes.txt").path
            let text = String(repeating: "These are my notes, not a database.\n", count: 200)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let error = try #require(throws: DiscfgError.self) { try SQLiteStore(path: path) }
            #expect(error.code == .unavailable)
            #expect(error.message.contains(path), "\(error.message)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(text.utf8), "the file is left as it was")
        }
    }
}

extension Item {
    /// Whether this item was written at `revision`.
    fileprivate func item(revision: Revision) -> Bool { modRevision == revision }
}
