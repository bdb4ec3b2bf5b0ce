import DiscfgAgent
import DiscfgCore
import Foundation
import Testing

/// The agent's cache directory is read back only as the agent wrote it: a directory other
/// users can change is refused, no file is opened through a link someone planted, and a
/// copy not signed with the cache's own key (a forgery whose sha256 holds) is never read.
@Suite("SnapshotCache: a cache only the agent can fill")
struct SnapshotCacheSafetyTests {
    static let demo = try! ConfigName("demo")

    /// A fresh directory under the system's temp directory, removed by `cleanUp`.
    static func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cache-safety-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func snapshot(_ value: String) throws -> PublishedSnapshot {
        let item = Item(key: try Key("/db/password"), value: Data(value.utf8), version: 1, createRevision: Revision(1), modRevision: Revision(1), modifiedAt: Date(milliseconds: 1_700_000_000_000))
        return try PublishedSnapshot(config: demo, revision: Revision(1), items: [item])
    }

    static func mode(_ path: String) -> mode_t {
        var status = stat()
        lstat(path, &status)
        return status.st_mode & 0o777
    }

    @Test("a missing directory is made 0700 with its key 0600; one others can write, a link, or another user's is refused")
    func directoryChecks() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }

        let fresh = root + "/made/cache"
        _ = try SnapshotCache(directory: fresh)
        #expect(Self.mode(fresh) == 0o700)
        #expect(Self.mode(fresh + "/" + SnapshotCache.keyFileName) == 0o600)

        let open = root + "/open"
        mkdir(open, 0o700)
        chmod(open, 0o777)
        let refused = #expect(throws: DiscfgError.self) { try SnapshotCache(directory: open) }
        #expect(refused?.message.contains("can be written by other users (mode 777)") == true, "\(refused?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: open + "/" + SnapshotCache.keyFileName), "nothing is written in a refused directory")

        chmod(open, 0o770)
        #expect(throws: DiscfgError.self) { try SnapshotCache(directory: open) }

        let link = root + "/link"
        symlink(fresh, link)
        let linked = #expect(throws: DiscfgError.self) { try SnapshotCache(directory: link) }
        #expect(linked?.message.contains("symbolic link") == true, "\(linked?.message ?? "")")

        // Only root can give a directory away; elsewhere the check is the same code.
        if geteuid() == 0 {
            let theirs = root + "/theirs"
            mkdir(theirs, 0o700)
            chown(theirs, 65534, 65534)
            let foreign = #expect(throws: DiscfgError.self) { try SnapshotCache(directory: theirs) }
            #expect(foreign?.message.contains("belongs to uid 65534") == true, "\(foreign?.message ?? "")")
        }
    }

    @Test("a link planted at the temp file's name or at a copy's name is never followed: its target stays as it was")
    func linksAreNotFollowed() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let victim = root + "/shadow"
        try Data("root:secret-hash\n".utf8).write(to: URL(fileURLWithPath: victim))
        let cache = try SnapshotCache(directory: root + "/cache")

        // The temp file's name is the copy's name and the pid: known to anyone watching.
        symlink(victim, cache.path(of: Self.demo) + ".tmp-\(getpid())")
        try cache.write(try Self.snapshot("hunter2"))
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root:secret-hash\n")
        #expect(try cache.read(Self.demo) == (try Self.snapshot("hunter2")))

        // A genuine copy moved away and linked to in its place is not read through the link.
        let elsewhere = root + "/elsewhere.json"
        rename(cache.path(of: Self.demo), elsewhere)
        symlink(elsewhere, cache.path(of: Self.demo))
        let refused = #expect(throws: DiscfgError.self) { try cache.read(Self.demo) }
        #expect(refused?.message.contains("symbolic link") == true, "\(refused?.message ?? "")")

        // Writing again replaces the link itself, not the file it pointed to.
        let before = try Data(contentsOf: URL(fileURLWithPath: elsewhere))
        try cache.write(try Self.snapshot("hunter3"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: elsewhere)) == before)
        #expect(try cache.read(Self.demo) == (try Self.snapshot("hunter3")))
    }

    @Test("a forged copy whose sha256 holds (unsigned, or signed with another key) is refused; the agent's own is read")
    func forgedCopiesAreRefused() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let cache = try SnapshotCache(directory: root + "/cache")
        let path = cache.path(of: Self.demo)

        try Self.snapshot("forged").encoded().write(to: URL(fileURLWithPath: path))
        let unsigned = #expect(throws: DiscfgError.self) { try cache.read(Self.demo) }
        #expect(unsigned?.message.contains("not signed") == true, "\(unsigned?.message ?? "")")

        try Self.snapshot("forged").encoded(signedWith: .generate()).write(to: URL(fileURLWithPath: path))
        let otherKey = #expect(throws: DiscfgError.self) { try cache.read(Self.demo) }
        #expect(otherKey?.message.contains("signature does not match") == true, "\(otherKey?.message ?? "")")

        try cache.write(try Self.snapshot("genuine"))
        // The key is kept: a cache opened again (the agent restarted) reads its own copies.
        #expect(try SnapshotCache(directory: root + "/cache").read(Self.demo) == (try Self.snapshot("genuine")))
    }
}
