import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The agent's Lambda extension following published snapshots (`DISCFG_AGENT_SOURCE`).
@Suite("Lambda extension over S3 snapshots")
struct ExtensionS3SourceTests {
    @Test("DISCFG_AGENT_SOURCE=s3://… serves the published config without reading DISCFG_STORE; a bad one is an init error naming it", .timeLimit(.minutes(2)))
    func followsSnapshots() async throws {
        try await withMotoTable { table in
            let cli = SnapshotPublishTests.cli(table)
            let bucket = MotoS3.uniqueBucket()
            try await MotoS3.createBucket(bucket, on: table.moto)
            try await table.createConfig("app")
            _ = try await cli.json("set", "app", "db/host", "db1")
            _ = try await cli.json("publish", "app", "--to", "s3://\(bucket)/prod")
            let environment = [
                "DISCFG_AGENT_SOURCE": "s3://\(bucket)/prod", "DISCFG_AGENT_CONFIGS": "app", "DISCFG_AGENT_INTERVAL": "1",
                "DISCFG_STORE": "dynamodb://us-east-1/nowhere?endpoint=http://127.0.0.1:\(try MotoServer.freeLoopbackPort())",
                "AWS_ENDPOINT_URL_S3": table.moto.endpoint.absoluteString,
            ]
            try await withExtension(environment: environment) { running in
                _ = try await running.api.waitForFirstNextRequest(timeout: .seconds(30))
                #expect(try await running.read("app", "/db/host") == "db1")
                let health = try await running.get("/healthz")
                #expect(health.body.contains("s3://\(bucket)/prod"), "\(health.body)")
            }
            var bad = environment
            bad["DISCFG_AGENT_SOURCE"] = "s3://"
            try await withExtension(environment: bad) { running in
                let error = try await running.api.waitForError(.initError, timeout: .seconds(60))
                #expect(error.message.contains("DISCFG_AGENT_SOURCE"), "\(error.message)")
            }
        }
    }
}
