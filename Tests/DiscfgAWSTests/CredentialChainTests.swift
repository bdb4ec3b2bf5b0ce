import AsyncHTTPClient
import DiscfgAWS
import DiscfgTestSupport
import Foundation
import NIOConcurrencyHelpers
import Testing

/// A credentials document as the ECS and IMDS endpoints serve it.
func credentialsDocument(key: String, expiration: Date, imds: Bool = false) -> String {
    let expiry = expiration.formatted(Date.ISO8601FormatStyle())
    let imdsFields = imds ? #""Code": "Success", "LastUpdated": "2026-01-01T00:00:00Z", "Type": "AWS-HMAC", "# : ""
    return """
        {\(imdsFields)"AccessKeyId": "\(key)", "SecretAccessKey": "secret-\(key)", "Token": "token-\(key)",
         "Expiration": "\(expiry)", "RoleArn": "arn:aws:iam::123456789012:role/discfg"}
        """
}

@Suite("Credential chain")
struct CredentialChainTests {
    @Test func explicitBeatsEnvironmentBeatsFiles() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(".aws/credentials", "[default]\naws_access_key_id=AKIAFILE\naws_secret_access_key=filesecret\n")
        let withEnv = isolatedEnvironment(home: directory.path, ["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "e"])

        let explicit = AWSCredentials(accessKeyID: "AKIAFLAG", secretAccessKey: "f")
        #expect(try await CredentialChain.standard(explicit: explicit, environment: withEnv).credentials().accessKeyID == "AKIAFLAG")

        let envChain = CredentialChain.standard(environment: withEnv)
        #expect(try await envChain.credentials().accessKeyID == "AKIAENV")
        #expect(await envChain.currentSource?.hasPrefix("environment") == true)

        let fileChain = CredentialChain.standard(environment: isolatedEnvironment(home: directory.path))
        #expect(try await fileChain.credentials().accessKeyID == "AKIAFILE")
        #expect(await fileChain.currentSource == "shared config files (profile default)")
    }

    @Test func nothingFoundListsEverySourceAndWhy() async throws {
        let directory = try TemporaryDirectory()
        let chain = CredentialChain.standard(environment: isolatedEnvironment(home: directory.path, ["AWS_PROFILE": "ghost"]))
        let error = await #expect(throws: CredentialChainError.self) { try await chain.credentials() }
        let attempts = error?.attempts ?? []
        #expect(attempts.map(\.source) == [
            "explicit credentials",
            "environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)",
            "shared config files (profile ghost)",
            "container credentials endpoint (ECS)",
            "EC2 instance metadata (IMDSv2)",
        ])
        let text = error.map(String.init(describing:)) ?? ""
        #expect(text.contains("profile 'ghost' not found"))
        #expect(text.contains("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"))
        #expect(text.contains("AWS_EC2_METADATA_DISABLED=true"))
    }

    @Test func containerEndpointWithAuthorizationToken() async throws {
        let expiry = Date().addingTimeInterval(3_600)
        try await withServer(try await LocalHTTPServer { request, _ in
            guard request.uri == "/v2/credentials/discfg" else { return .text(404, "no") }
            guard request.header("Authorization") == "Bearer discfg-token" else { return .text(401, "unauthorized") }
            return .json(200, credentialsDocument(key: "ASIAECS", expiration: expiry))
        }) { server in
            let directory = try TemporaryDirectory()
            let environment = isolatedEnvironment(home: directory.path, [
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": server.baseURL + "/v2/credentials/discfg",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "Bearer discfg-token",
            ])
            let chain = CredentialChain.standard(environment: environment)
            let credentials = try await chain.credentials()
            #expect(credentials.accessKeyID == "ASIAECS")
            #expect(credentials.secretAccessKey == "secret-ASIAECS")
            #expect(credentials.sessionToken == "token-ASIAECS")
            #expect(abs((credentials.expiration ?? .distantPast).timeIntervalSince(expiry)) < 1)
            #expect(await chain.currentSource == "container credentials endpoint (ECS)")

            // Without the token the endpoint refuses, and the chain reports the HTTP status.
            var noToken = environment
            noToken["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = nil
            let error = await #expect(throws: CredentialChainError.self) {
                try await CredentialChain.standard(environment: noToken).credentials()
            }
            #expect(error?.description.contains("HTTP 401") == true)
        }
    }

    @Test func containerEndpointSelection() throws {
        let relative = try ContainerCredentialProvider.endpoint(environment: ["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/creds?id=1"])
        #expect(relative.absoluteString == "http://169.254.170.2/v2/creds?id=1")
        let full = try ContainerCredentialProvider.endpoint(environment: ["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:51679/creds"])
        #expect(full.port == 51679)
        #expect(throws: CredentialProviderError.self) {
            try ContainerCredentialProvider.endpoint(environment: ["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://203.0.113.9/creds"])
        }
        #expect(try ContainerCredentialProvider.endpoint(environment: ["AWS_CONTAINER_CREDENTIALS_FULL_URI": "https://creds.example/x"]).host == "creds.example")
    }

    @Test func instanceMetadataV2FetchesTokenRoleAndCredentials() async throws {
        let expiry = Date().addingTimeInterval(6 * 3_600)
        try await withServer(try await LocalHTTPServer { request, _ in
            switch (request.method, request.uri) {
            case ("PUT", "/latest/api/token"):
                guard request.header("X-aws-ec2-metadata-token-ttl-seconds") != nil else { return .text(400, "ttl") }
                return .text(200, "imds-session-token")
            case ("GET", let uri) where uri.hasPrefix("/latest/meta-data/iam/security-credentials/"):
                guard request.header("X-aws-ec2-metadata-token") == "imds-session-token" else { return .text(401, "") }
                if uri == "/latest/meta-data/iam/security-credentials/" { return .text(200, "discfg-role\n") }
                if uri == "/latest/meta-data/iam/security-credentials/discfg-role" {
                    return .json(200, credentialsDocument(key: "ASIAIMDS", expiration: expiry, imds: true))
                }
                return .text(404, "")
            default:
                return .text(404, "")
            }
        }) { server in
            let directory = try TemporaryDirectory()
            let environment = isolatedEnvironment(home: directory.path, [
                "AWS_EC2_METADATA_DISABLED": "false",
                "AWS_EC2_METADATA_SERVICE_ENDPOINT": server.baseURL + "/",
            ])
            let chain = CredentialChain.standard(environment: environment)
            let credentials = try await chain.credentials()
            #expect(credentials.accessKeyID == "ASIAIMDS")
            #expect(credentials.sessionToken == "token-ASIAIMDS")
            #expect(server.requests.map { "\($0.method) \($0.uri)" } == [
                "PUT /latest/api/token",
                "GET /latest/meta-data/iam/security-credentials/",
                "GET /latest/meta-data/iam/security-credentials/discfg-role",
            ])
        }
    }

    @Test func instanceMetadataFailsFastWhenNothingListens() async throws {
        // Bind and release a port so that connecting to it is refused.
        let port = try MotoServer.freeLoopbackPort()
        let provider = InstanceMetadataCredentialProvider(environment: [
            "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:\(port)",
        ])
        // How fast it fails is the benchmark's business; here: it fails, and says where.
        let error = await #expect(throws: CredentialProviderError.self) { try await provider.credentials() }
        #expect(error?.reason.contains("session token request") == true)
    }

    @Test func temporaryCredentialsRefreshBeforeExpiry() async throws {
        let clock = TestClock()
        let issued = NIOLockedValueBox(0)
        try await withServer(try await LocalHTTPServer { _, index in
            let number = issued.withLockedValue { $0 += 1; return $0 }
            // Each document expires one hour after the test clock's current time.
            return .json(200, credentialsDocument(key: "ASIA\(number)", expiration: clock.now.addingTimeInterval(3_600)))
        }) { server in
            let directory = try TemporaryDirectory()
            let chain = CredentialChain.standard(
                environment: isolatedEnvironment(home: directory.path, ["AWS_CONTAINER_CREDENTIALS_FULL_URI": server.baseURL + "/creds"]),
                now: clock.closure
            )
            #expect(try await chain.credentials().accessKeyID == "ASIA1")
            clock.advance(by: 54 * 60)  // 6 minutes left: still outside the 5-minute margin
            #expect(try await chain.credentials().accessKeyID == "ASIA1")
            #expect(server.requests.count == 1)
            clock.advance(by: 2 * 60)  // 4 minutes left: refreshed ahead of expiry
            #expect(try await chain.credentials().accessKeyID == "ASIA2")
            #expect(server.requests.count == 2)
            #expect(try await chain.credentials().accessKeyID == "ASIA2")
            #expect(server.requests.count == 2)
        }
    }

    @Test func concurrentCallersShareOneRefresh() async throws {
        let clock = TestClock()
        try await withServer(try await LocalHTTPServer { _, index in
            .json(200, credentialsDocument(key: "ASIA\(index + 1)", expiration: clock.now.addingTimeInterval(3_600)),
                  delay: .milliseconds(200))
        }) { server in
            let directory = try TemporaryDirectory()
            let chain = CredentialChain.standard(
                environment: isolatedEnvironment(home: directory.path, ["AWS_CONTAINER_CREDENTIALS_FULL_URI": server.baseURL + "/creds"]),
                now: clock.closure
            )
            let keys = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await chain.credentials().accessKeyID } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(keys) == ["ASIA1"])
            #expect(server.requests.count == 1)
            #expect(await chain.resolutionCount == 1)

            clock.advance(by: 3_500)
            let refreshed = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await chain.credentials().accessKeyID } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(refreshed) == ["ASIA2"])
            #expect(server.requests.count == 2)
        }
    }

    @Test func failedRefreshKeepsStillValidCredentials() async throws {
        let clock = TestClock()
        try await withServer(try await LocalHTTPServer { _, index in
            index == 0
                ? .json(200, credentialsDocument(key: "ASIAFIRST", expiration: clock.now.addingTimeInterval(3_600)))
                : .text(500, "endpoint down")
        }) { server in
            let directory = try TemporaryDirectory()
            let chain = CredentialChain.standard(
                environment: isolatedEnvironment(home: directory.path, ["AWS_CONTAINER_CREDENTIALS_FULL_URI": server.baseURL + "/creds"]),
                now: clock.closure
            )
            #expect(try await chain.credentials().accessKeyID == "ASIAFIRST")
            clock.advance(by: 3_400)  // inside the refresh margin but not yet expired
            #expect(try await chain.credentials().accessKeyID == "ASIAFIRST")
            clock.advance(by: 300)  // now expired: the failure surfaces
            await #expect(throws: CredentialChainError.self) { try await chain.credentials() }
        }
    }
}
