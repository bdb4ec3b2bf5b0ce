import DiscfgAgent
import DiscfgAWS
import DiscfgCore
import DiscfgStores
import Foundation
import Testing

/// Snapshots signed with a key publisher and agent share (`--snapshot-key-file`): an agent
/// given the key takes no object without its signature, however intact its sha256.
@Suite("S3Source: signed snapshots")
struct SignedSnapshotTests {
    static let app = S3SourceTests.app

    @Test("with a key, an unsigned, forged or otherwise-signed object is refused and the agent cannot start on it; the publisher's signed one is taken", .timeLimit(.minutes(2)))
    func signedOnly() async throws {
        try await S3SourceTests.withFixture { fixture in
            let key = SnapshotKey.generate()
            let revision = try await fixture.publish()  // unsigned, as before keys
            let unsigned = Agent(source: S3Source(s3: fixture.s3, destination: fixture.destination, key: key), configs: [Self.app], interval: .seconds(60))
            let refused = await #expect(throws: DiscfgError.self) { try await unsigned.load() }
            #expect(refused?.message.contains("not signed") == true, "\(refused?.message ?? "")")

            // The same revision is written again, signed, by a publisher with the key.
            let snapshot = try await PublishedSnapshot.read(from: fixture.store, config: Self.app)
            let outcome = try await SnapshotPublisher(s3: fixture.s3, key: key).publish(snapshot, createdAt: fixture.created, to: fixture.destination)
            guard case .published(revision, _) = outcome else { throw DiscfgError(.internal, "not written again signed: \(outcome)") }
            let agent = Agent(source: S3Source(s3: fixture.s3, destination: fixture.destination, key: key), configs: [Self.app], interval: .seconds(60))
            try await agent.load()
            #expect(try await agent.replica.get(try Key("/db/host"), in: Self.app)?.value == Data("db1".utf8))
            let follower = try #require(agent.followers.first)

            // Whoever can write the bucket but holds no key: a later revision with a value
            // of their choosing and a sha256 that holds, unsigned or signed with their own key.
            let item = Item(key: try Key("/db/host"), value: Data("evil".utf8), version: 9, createRevision: 1, modRevision: Revision(revision.rawValue + 1), modifiedAt: Date())
            let forged = try PublishedSnapshot(config: Self.app, revision: Revision(revision.rawValue + 1), items: [item])
            for (body, phrase) in [(forged.encoded(), "not signed"), (forged.encoded(signedWith: .generate()), "signature does not match")] {
                try await fixture.overwrite(body)
                guard case .failed(let reason) = await follower.refresh() else {
                    Issue.record("forgery taken")
                    continue
                }
                #expect(reason.contains(phrase), "\(reason)")
                #expect(try await agent.replica.get(try Key("/db/host"), in: Self.app)?.value == Data("db1".utf8))
            }

            // Without a key, as before: the sha256 is all that is checked.
            let open = Agent(source: fixture.source(), configs: [Self.app], interval: .seconds(60))
            try await open.load()
            #expect(try await open.replica.get(try Key("/db/host"), in: Self.app)?.value == Data("evil".utf8))
        }
    }
}
