import DiscfgAWS
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg publish` and the stream function's `--publish`: a config's state written to S3
/// (moto) as one PublishedSnapshot object, only forward, with clear refusals.
@Suite("Snapshots published to S3")
struct SnapshotPublishTests {
    /// The CLI of `table` with S3 pointed at its moto.
    static func cli(_ table: MotoTable) -> DiscfgCommand {
        var cli = table.cli
        cli.environment["AWS_ENDPOINT_URL_S3"] = table.moto.endpoint.absoluteString
        return cli
    }

    /// The object's head and decoded snapshot.
    static func published(_ s3: S3Client, bucket: String, key: String) async throws -> (S3ObjectHead, PublishedSnapshot) {
        guard case .object(let object) = try await s3.getObject(bucket: bucket, key: key) else { throw LambdaTestFailure("no object") }
        return (object.head, try PublishedSnapshot(decoding: object.body))
    }

    @Test("publish writes the state once per revision, with its metadata, and moves forward only")
    func publishes() async throws {
        try await withMotoTable { table in
            let cli = Self.cli(table)
            let s3 = MotoS3.client(table.moto)
            defer { Task { try? await s3.shutdown() } }
            let bucket = MotoS3.uniqueBucket()
            try await MotoS3.createBucket(bucket, on: table.moto)
            try await table.createConfig("app")
            _ = try await cli.json("set", "app", "db/host", "db1")
            let second = try #require(try await cli.json("set", "app", "feature", "on").revision)

            let first = try await cli.json("publish", "app", "--to", "s3://\(bucket)/prod/")
            #expect(first.revision == second)
            let (head, snapshot) = try await Self.published(s3, bucket: bucket, key: "prod/app.json")
            #expect(head.contentType == "application/json")
            #expect(head.metadata["discfg-revision"] == String(second.rawValue))
            #expect(snapshot.revision == second)
            #expect(snapshot.items.map(\.key.description) == ["/db/host", "/feature"])

            let again = try await cli.run("publish", "app", "--to", "s3://\(bucket)/prod")
            #expect(again.status == 0)
            #expect(again.stdout.contains("already holds revision \(second.rawValue); nothing written"), "\(again.stdout)")
            #expect(try await s3.headObject(bucket: bucket, key: "prod/app.json")?.etag == head.etag, "same revision, same object")

            let third = try #require(try await cli.json("delete", "app", "feature").revision)
            _ = try await cli.json("publish", "app", "--to", "s3://\(bucket)/prod")
            let (_, moved) = try await Self.published(s3, bucket: bucket, key: "prod/app.json")
            #expect(moved.revision == third)
            #expect(moved.items.map(\.key.description) == ["/db/host"])

            // An object at a later revision (another publisher) is never overwritten.
            let newer = try PublishedSnapshot(config: ConfigName("app"), revision: Revision(third.rawValue + 5), items: [])
            let created = try #require(head.metadata["discfg-created"])
            try await s3.putObject(bucket: bucket, key: "prod/app.json", body: newer.encoded(), contentType: "application/json",
                                   metadata: ["discfg-revision": String(third.rawValue + 5), "discfg-created": created])
            let stale = try await cli.run("publish", "app", "--to", "s3://\(bucket)/prod")
            #expect(stale.stdout.contains("already holds revision \(third.rawValue + 5)"), "\(stale.stdout)\(stale.stderr)")
        }
    }

    @Test("bad URLs, a missing bucket, a denied PutObject, a foreign object and a dead endpoint are refused with their own message and code", arguments: [
        ("s3://", 2, "names no bucket"),
        ("s3:///prefix", 2, "names no bucket"),
        ("https://bucket/prefix", 2, "is not an S3 location"),
        ("s3://Bad_Bucket/p", 2, "is not an S3 bucket name"),
        ("s3://ok-bucket/a/../b", 2, "has an empty, . or .. segment"),
    ])
    func badURLs(url: String, status: Int32, message: String) async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            let result = try await Self.cli(table).run("publish", "app", "--to", url)
            #expect(result.status == status, "\(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }

    @Test("a bucket that does not exist, a policy denying PutObject, a foreign object and an unreachable endpoint")
    func refusals() async throws {
        try await withMotoTable { table in
            let cli = Self.cli(table)
            try await table.createConfig("app")
            let missing = MotoS3.uniqueBucket("none")
            let noBucket = try await cli.run("publish", "app", "--to", "s3://\(missing)/p")
            #expect(noBucket.status == 2, "\(noBucket.stderr)")
            #expect(noBucket.stderr.contains("bucket \(missing) does not exist"), "\(noBucket.stderr)")

            let bucket = MotoS3.uniqueBucket()
            try await MotoS3.createBucket(bucket, on: table.moto)
            let s3 = MotoS3.client(table.moto)
            defer { Task { try? await s3.shutdown() } }
            try await s3.putObject(bucket: bucket, key: "p/app.json", body: Data("mine".utf8), contentType: "text/plain")
            let foreign = try await cli.run("publish", "app", "--to", "s3://\(bucket)/p")
            #expect(foreign.status == 4, "\(foreign.stderr)")
            #expect(foreign.stderr.contains("is not a discfg snapshot"), "\(foreign.stderr)")

            try await MotoS3.deny("s3:PutObject", on: bucket, moto: table.moto)
            let denied = try await cli.run("publish", "app", "--to", "s3://\(bucket)/q")
            #expect(denied.status == 1, "\(denied.stderr)")
            #expect(denied.stderr.contains("no permission to s3:PutObject on arn:aws:s3:::\(bucket)/q/app.json"), "\(denied.stderr)")

            var dead = table.cli
            dead.environment["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:\(try MotoServer.freeLoopbackPort())"
            let unreachable = try await dead.run("publish", "app", "--to", "s3://\(bucket)/p")
            #expect(unreachable.status == 1, "\(unreachable.stderr)")
            #expect(unreachable.stderr.contains("S3 endpoint unreachable"), "\(unreachable.stderr)")
        }
    }

    @Test("update --publish makes the stream function publish after each change; --publish none stops it")
    func streamPublishes() async throws {
        try await withMotoTable { table in
            let cli = Self.cli(table)
            let services = MotoServices(endpoint: table.moto.endpoint)
            let s3 = MotoS3.client(table.moto)
            defer { Task { try? await s3.shutdown(); await services.shutdown() } }
            let bucket = MotoS3.uniqueBucket()
            try await MotoS3.createBucket(bucket, on: table.moto)
            try await table.createConfig("app")
            let bad = try await cli.run("update", "app", "--publish", "s3://x")
            #expect(bad.status == 2 && bad.stderr.contains("is not an S3 bucket name"), "\(bad.stderr)")
            let updated = try await cli.run("update", "app", "--publish", "s3://\(bucket)/live")
            #expect(updated.status == 0 && updated.stdout.contains("publish: s3://\(bucket)/live"), "\(updated.stdout)\(updated.stderr)")
            _ = try await cli.json("set", "app", "a", "1")
            let last = try #require(try await cli.json("set", "app", "b", "2").revision)

            let environment = ["AWS_ENDPOINT_URL_S3": table.moto.endpoint.absoluteString]
            try await withLambda(table, environment: environment) { lambda in
                let records = try await services.streamRecords(table: table.name)
                let answer = try await lambda.respond(MotoServices.streamEvent(records))
                #expect((answer["batchItemFailures"] as? [Any])?.isEmpty == true, "\(answer)\n\(lambda.process.output.logs)")
                let (head, snapshot) = try await Self.published(s3, bucket: bucket, key: "live/app.json")
                #expect(snapshot.revision == last)
                #expect(head.metadata["discfg-revision"] == String(last.rawValue))

                // A retried (older) batch writes nothing: the object stays at its revision.
                _ = try await lambda.respond(MotoServices.streamEvent(records))
                #expect(try await s3.headObject(bucket: bucket, key: "live/app.json")?.etag == head.etag)
            }

            let cleared = try await cli.run("update", "app", "--publish", "none")
            #expect(cleared.stdout.contains("publish: nowhere"), "\(cleared.stdout)\(cleared.stderr)")
            let info = try await cli.run("info", "app", "-f", "json")
            #expect(!info.stdout.contains("\"publish\""), "\(info.stdout)")
        }
    }
}
