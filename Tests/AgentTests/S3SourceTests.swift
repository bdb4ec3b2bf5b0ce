import DiscfgAgent
import DiscfgAWS
import DiscfgConformance
import DiscfgCore
import DiscfgStores
import DiscfgTestSupport
import Foundation
import Testing

/// An agent following the snapshots `discfg publish` writes to S3 (moto): one conditional
/// GET per check, new revisions taken whole, and every object that is not an intact, later
/// snapshot of the config refused while the copy held goes on being served.
@Suite("S3Source: an agent over published snapshots")
struct S3SourceTests {
    static let app = try! ConfigName("app")

    /// A memory store holding `app`, a bucket on the shared moto, and the snapshot published.
    struct Fixture {
        let store = MemoryStore()
        let s3: S3Client
        let bucket: String
        let destination: SnapshotDestination
        let created = Date(milliseconds: 1_700_000_000_000)

        var key: String { destination.key(for: S3SourceTests.app) }

        /// Publishes the store's current state of `app`.
        func publish() async throws -> Revision {
            let snapshot = try await PublishedSnapshot.read(from: store, config: S3SourceTests.app)
            _ = try await SnapshotPublisher(s3: s3).publish(snapshot, createdAt: created, to: destination)
            return snapshot.revision
        }

        /// Overwrites the object with `body`, as someone other than discfg might.
        func overwrite(_ body: Data) async throws {
            try await s3.putObject(bucket: bucket, key: key, body: body, contentType: "application/json")
        }

        func source() -> S3Source { S3Source(s3: s3, destination: destination) }
    }

    static func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let moto = try await SharedMotoServer.shared.server()
        let s3 = MotoS3.client(moto)
        let bucket = MotoS3.uniqueBucket("agent")
        try await MotoS3.createBucket(bucket, on: moto)
        let fixture = Fixture(s3: s3, bucket: bucket, destination: try SnapshotDestination(parsing: "s3://\(bucket)/prod"))
        _ = try await fixture.store.createConfig(app, settings: ConfigSettings())
        _ = try await fixture.store.set(try Key("/db/host"), to: Data("db1".utf8), in: app)
        _ = try await fixture.store.set(try Key("/feature"), to: Data("on".utf8), in: app)
        do {
            try await body(fixture)
        } catch {
            try? await s3.shutdown()
            throw error
        }
        try await s3.shutdown()
    }

    @Test("a published config is served; a new revision is taken whole, and watchers see it as events", .timeLimit(.minutes(2)))
    func follows() async throws {
        try await Self.withFixture { fixture in
            #expect(try await fixture.publish() == 2)
            let agent = Agent(source: fixture.source(), configs: [Self.app], interval: .seconds(60))
            try await agent.load()
            #expect(try await agent.replica.get(try Key("/db/host"), in: Self.app)?.value == Data("db1".utf8))
            let follower = try #require(agent.followers.first)
            #expect(await follower.refresh() == .unchanged, "the same object: 304")

            let watch = await agent.replica.watch(Self.app, scope: .prefix(.root), from: 3)
            _ = try await fixture.store.set(try Key("/db/host"), to: Data("db2".utf8), in: Self.app)
            _ = try await fixture.store.delete(try Key("/feature"), in: Self.app, conditions: [])
            #expect(try await fixture.publish() == 4)
            #expect(await follower.refresh() == .loaded(4))
            #expect(try await agent.replica.get(try Key("/db/host"), in: Self.app)?.value == Data("db2".utf8))
            #expect(try await agent.replica.get(try Key("/feature"), in: Self.app) == nil)
            var events = watch.makeAsyncIterator()
            let first = try #require(try await events.next())
            let second = try #require(try await events.next())
            #expect(first.kind == .put && first.key.path == "/db/host" && first.revision == 3 && first.prevItem?.value == Data("db1".utf8))
            #expect(second.kind == .delete && second.key.path == "/feature" && second.revision == 4)
            #expect(follower.status.errors == 0)
        }
    }

    @Test("a corrupt, cut, foreign, other-format or older object is refused: the copy held is served, the error counted", .timeLimit(.minutes(2)))
    func refusals() async throws {
        try await Self.withFixture { fixture in
            _ = try await fixture.store.set(try Key("/db/host"), to: Data("db9".utf8), in: Self.app)
            let good = try await fixture.publish()
            guard case .object(let object) = try await fixture.s3.getObject(bucket: fixture.bucket, key: fixture.key) else { throw DiscfgError(.internal, "no object") }
            let agent = Agent(source: fixture.source(), configs: [Self.app], interval: .seconds(60))
            try await agent.load()
            let follower = try #require(agent.followers.first)

            var flipped = object.body
            let middle = flipped.startIndex + flipped.count / 2
            flipped[middle] ^= 0x01
            let other = try PublishedSnapshot(config: ConfigName("other"), revision: 50, items: [])
            let older = try PublishedSnapshot(config: Self.app, revision: 1, items: [])
            let format = String(decoding: object.body, as: UTF8.self).replacingOccurrences(of: "discfg-snapshot/1", with: "discfg-snapshot/2")
            let cases: [(String, Data, String)] = [
                ("a flipped byte", flipped, "refused"),
                ("cut short", object.body.prefix(object.body.count - 20), "cut short"),
                ("another config", other.encoded(), "holds config \"other\""),
                ("another format", Data(format.utf8), "discfg-snapshot/2"),
                ("not JSON", Data("<html>gateway</html>".utf8), "refused"),
                ("an older revision", older.encoded(), "older than the revision \(good) held"),
            ]
            var errors = 0
            for (name, body, phrase) in cases {
                try await fixture.overwrite(body)
                for _ in 0..<2 {  // read again, then 304 on the refused object: refused still
                    guard case .failed(let reason) = await follower.refresh() else {
                        Issue.record("\(name): taken")
                        continue
                    }
                    errors += 1
                    #expect(reason.contains(phrase) && reason.contains("s3://\(fixture.bucket)/prod/app.json"), "\(name): \(reason)")
                    #expect(try await agent.replica.get(try Key("/db/host"), in: Self.app)?.value == Data("db9".utf8), "\(name)")
                    #expect(agent.replica.snapshot(of: Self.app)?.revision == good, "\(name)")
                }
            }
            #expect(follower.status.errors == errors)
            #expect(agent.metricsText().contains("discfg_agent_store_errors_total{config=\"app\"} \(errors)"))

            // A good object again is taken.
            _ = try await fixture.store.set(try Key("/db/host"), to: Data("db10".utf8), in: Self.app)
            try await fixture.s3.putObject(
                bucket: fixture.bucket, key: fixture.key, body: try await PublishedSnapshot.read(from: fixture.store, config: Self.app).encoded(),
                contentType: "application/json")
            #expect(await follower.refresh() == .loaded(Revision(good.rawValue + 1)))
        }
    }

    @Test("a config deleted and created again (a later creation time) is followed back to revision 1", .timeLimit(.minutes(1)))
    func recreated() async throws {
        try await Self.withFixture { fixture in
            #expect(try await fixture.publish() == 2)
            let agent = Agent(source: fixture.source(), configs: [Self.app], interval: .seconds(60))
            try await agent.load()
            let again = try PublishedSnapshot(config: Self.app, revision: 1, items: [])
            let later = fixture.created.addingTimeInterval(60)
            _ = try await SnapshotPublisher(s3: fixture.s3).publish(again, createdAt: later, to: fixture.destination)
            #expect(try await fixture.s3.headObject(bucket: fixture.bucket, key: fixture.key)?.metadata["discfg-revision"] == "1")
            let follower = try #require(agent.followers.first)
            #expect(await follower.refresh() == .loaded(1))
            #expect(try await agent.replica.get(try Key("/db/host"), in: Self.app) == nil)
        }
    }

    @Test("a missing bucket or object at start: refused naming bucket, key and cause, or served from the cache", .timeLimit(.minutes(2)))
    func missingAtStart() async throws {
        try await Self.withFixture { fixture in
            let none = try SnapshotDestination(parsing: "s3://\(MotoS3.uniqueBucket("none"))/prod")
            let missingBucket = Agent(source: S3Source(s3: fixture.s3, destination: none), configs: [Self.app], interval: .seconds(60))
            try await expectError(.unavailable, mentioning: ["\(none.bucket)", "prod/app.json", "does not exist", "no copy on disk"]) {
                try await missingBucket.load()
            }
            let missingObject = Agent(source: fixture.source(), configs: [Self.app], interval: .seconds(60))
            try await expectError(.unavailable, mentioning: ["no snapshot at s3://\(fixture.bucket)/prod/app.json", "discfg publish app"]) {
                try await missingObject.load()
            }

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-s3cache-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let cache = try SnapshotCache(directory: directory)
            let copy = try await PublishedSnapshot.read(from: fixture.store, config: Self.app)
            try cache.write(copy)
            let cached = Agent(source: S3Source(s3: fixture.s3, destination: none), configs: [Self.app], interval: .seconds(60), cache: cache)
            try await cached.load()
            #expect(try await cached.replica.get(try Key("/feature"), in: Self.app)?.value == Data("on".utf8))

            // Never back past the copy served from the cache, once the source answers.
            let older = try PublishedSnapshot(config: Self.app, revision: 1, items: [])
            let fromCache = S3Source(s3: fixture.s3, destination: fixture.destination)
            try await fixture.overwrite(older.encoded())
            let resumed = Agent(source: fromCache, configs: [Self.app], interval: .seconds(60), cache: cache)
            fromCache.resume(from: copy)
            let follower = try #require(resumed.followers.first)
            resumed.replica.install(copy)
            guard case .failed(let reason) = await follower.refresh() else {
                Issue.record("an older object was taken over the cached copy")
                return
            }
            #expect(reason.contains("older than the revision 2 held"), "\(reason)")
        }
    }
}
