import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The built binary against moto's DynamoDB: `--store dynamodb://…?endpoint=…` with fake
/// credentials in the environment, as a person would use a local DynamoDB.
@Suite("CLI: DynamoDB store")
struct DynamoDBCLITests {
    @Test("init creates the table; create, set, get -f json, info shows the table")
    func endToEnd() async throws {
        let (cli, store) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        let initialized = try await cli.run("init", "--store", store)
        #expect(initialized.status == 0, "\(initialized.stderr)")
        #expect(initialized.stdout.contains("created table"))
        #expect(initialized.stdout.contains("ACTIVE"))
        #expect(initialized.stderr.contains("creating DynamoDB table"), "progress goes to stderr")

        #expect(try await cli.run("create", "myapp", "--store", store).status == 0)
        let set = try await cli.run("set", "myapp", "db/host", #"{"json":"works"}"#, "--store", store)
        #expect(set.status == 0, "\(set.stderr)")
        let got = try await cli.run("get", "myapp", "db/host", "-f", "json", "--store", store)
        #expect(got.status == 0, "\(got.stderr)")
        let envelope = try got.envelope()
        #expect(envelope.item?.value == #"{"json":"works"}"#)
        #expect(envelope.item?.version == 1)

        let info = try await cli.run("info", "myapp", "--store", store)
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("revision       1"))
        #expect(info.stdout.contains("table status   ACTIVE"))
        #expect(info.stdout.contains("on-demand"))
        let json = try await cli.run("info", "myapp", "-f", "json", "--store", store).envelope()
        #expect(json.table?.status == "ACTIVE")
        #expect(json.table?.timeToLive == "ENABLED")
        #expect(json.table?.stream == "NEW_IMAGE")
    }

    @Test("create makes a provisioned table; update changes its capacity")
    func capacity() async throws {
        let (cli, store) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        let created = try await cli.run("create", "app", "--store", store, "--read-capacity", "4", "--write-capacity", "2")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try await cli.run("info", "app", "-f", "json", "--store", store).envelope().table?.readCapacity == 4)
        let updated = try await cli.run("update", "app", "--store", store, "--read-capacity", "8", "--write-capacity", "3")
        #expect(updated.status == 0, "\(updated.stderr)")
        let table = try await cli.run("info", "app", "-f", "json", "--store", store).envelope().table
        #expect(table?.readCapacity == 8)
        #expect(table?.writeCapacity == 3)
        #expect(try await cli.run("update", "app", "--store", store, "--read-capacity", "8").status == 2, "both or neither")
    }

    @Test("a missing table and missing credentials are one clear line each")
    func errors() async throws {
        let (cli, store) = try await CLIRunner.onDynamoDB()
        defer { cli.cleanUp() }
        let missing = try await cli.run("get", "app", "k", "--store", store)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("does not exist"))
        #expect(missing.stderr.contains("discfg init"))

        var bare = cli
        bare.environment.removeValue(forKey: "AWS_ACCESS_KEY_ID")
        bare.environment.removeValue(forKey: "AWS_SECRET_ACCESS_KEY")
        bare.environment.removeValue(forKey: "AWS_SESSION_TOKEN")
        bare.environment.removeValue(forKey: "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        bare.environment.removeValue(forKey: "AWS_CONTAINER_CREDENTIALS_FULL_URI")
        let unauthenticated = try await bare.run("get", "app", "k", "--store", store)
        #expect(unauthenticated.status == 1)
        #expect(unauthenticated.stderr.contains("no AWS credentials found; tried:"))
        #expect(unauthenticated.stderr.contains("environment"))

        let explicit = try await bare.run("init", "--store", store, "--keyId", "AKIDEXAMPLE", "--secretKey", "x", "-f", "silent")
        #expect(explicit.status == 0, "--keyId/--secretKey work: \(explicit.stderr)")
    }
}
