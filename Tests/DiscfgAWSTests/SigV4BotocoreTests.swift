import DiscfgAWS
import DiscfgTestSupport
import Foundation
import Testing

/// Compares discfg's signer with botocore's on the request shape discfg actually sends.
///
/// The test-suite vectors prove canonicalization; this proves the whole DynamoDB request
/// (JSON body, target header, session token) signs exactly like the reference SDK. A missing
/// python3 or botocore fails the test: skipping would leave the signer unproven.
@Suite("SigV4 against botocore")
struct SigV4BotocoreTests {
    struct BotocoreResult: Decodable {
        let botocore_version: String
        let authorization: String
        let canonical_request: String
        let string_to_sign: String
    }

    static let timestamp = "20260115T083012Z"

    @Test("DynamoDB GetItem signs like botocore", arguments: [nil, "FwoGZXIvYXdzEB0aDP//discfg+session/token=="])
    func matchesBotocore(sessionToken: String?) async throws {
        let url = URL(string: "https://dynamodb.us-east-1.amazonaws.com/")!
        let body = #"{"TableName":"discfg","Key":{"key":{"S":"/app/feature"}},"ConsistentRead":true}"#
        let headers = [
            HTTPHeaderField(name: "Content-Type", value: "application/x-amz-json-1.0"),
            HTTPHeaderField(name: "X-Amz-Target", value: "DynamoDB_20120810.GetItem"),
        ]
        let credentials = AWSCredentials(
            accessKeyID: "AKIDEXAMPLE",
            secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            sessionToken: sessionToken
        )
        let ours = SigV4Signer(region: "us-east-1", service: "dynamodb").sign(
            SigV4Request(method: "POST", url: url, headers: headers),
            payload: .bytes(Data(body.utf8)),
            credentials: credentials,
            date: try #require(AWSTimestamp.parse(Self.timestamp))
        )

        var spec: [String: Any] = [
            "method": "POST",
            "url": url.absoluteString,
            "headers": headers.map { [$0.name, $0.value] },
            "body": body,
            "access_key": credentials.accessKeyID,
            "secret_key": credentials.secretAccessKey,
            "region": "us-east-1",
            "service": "dynamodb",
            "timestamp": Self.timestamp,
        ]
        if let sessionToken { spec["session_token"] = sessionToken }
        let reference = try await Self.botocoreSign(spec)

        #expect(ours.canonicalRequest == reference.canonical_request)
        #expect(ours.stringToSign == reference.string_to_sign)
        #expect(ours.authorization == reference.authorization, "botocore \(reference.botocore_version)")
    }

    /// The requests the CLI sends to an API behind API Gateway with IAM auth: encoded key
    /// paths, query strings and bodies, for service `execute-api`.
    @Test("API Gateway (execute-api) requests sign like botocore", arguments: [
        ("GET", "https://abc123.execute-api.eu-west-1.amazonaws.com/v1/myapp/keys/db/host%20name?revision=3&raw", ""),
        ("PUT", "https://abc123.execute-api.eu-west-1.amazonaws.com/v1/myapp/keys/feature%2Fflag?ttl=60", "on"),
        ("GET", "https://abc123.execute-api.eu-west-1.amazonaws.com/v1/myapp/watch?prefix=%2Fdb%2F&fromRevision=12&timeout=20", ""),
    ])
    func executeAPIMatchesBotocore(method: String, url: String, body: String) async throws {
        let target = try #require(URL(string: url))
        // User-Agent is left unsigned, as botocore does: CloudFront in front of an
        // edge-optimized API may rewrite it.
        let headers = [HTTPHeaderField(name: "Content-Type", value: "application/octet-stream")]
        let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", sessionToken: "token/with+chars==")
        let ours = SigV4Signer(region: "eu-west-1", service: "execute-api").sign(
            SigV4Request(method: method, url: target, headers: headers),
            payload: .bytes(Data(body.utf8)),
            credentials: credentials,
            date: try #require(AWSTimestamp.parse(Self.timestamp))
        )
        let reference = try await Self.botocoreSign([
            "method": method, "url": url, "headers": headers.map { [$0.name, $0.value] }, "body": body,
            "access_key": credentials.accessKeyID, "secret_key": credentials.secretAccessKey,
            "session_token": "token/with+chars==", "region": "eu-west-1", "service": "execute-api", "timestamp": Self.timestamp,
        ])
        #expect(ours.canonicalRequest == reference.canonical_request)
        #expect(ours.authorization == reference.authorization, "botocore \(reference.botocore_version)")
    }

    static func botocoreSign(_ spec: [String: Any]) async throws -> BotocoreResult {
        let script = try #require(
            Bundle.module.url(forResource: "botocore_sign", withExtension: "py"),
            "botocore_sign.py is missing from the test resources"
        )
        let input = try JSONSerialization.data(withJSONObject: spec)
        // Through env, so that a missing python3 is status 127 like any other failure.
        let output = try await ChildProcess.run(
            "/usr/bin/env", ["python3", script.path],
            environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment), stdin: .bytes(input)
        )
        switch output.status {
        case 0:
            break
        case 127:
            throw ReferenceSignerUnavailable(
                "python3 is not installed or not on PATH; the botocore comparison needs python3 with botocore (pip install botocore)")
        case 3:
            throw ReferenceSignerUnavailable(
                "python3 runs but cannot import botocore (\(output.stderr.trimmingCharacters(in: .whitespacesAndNewlines))); install it with: pip install botocore")
        default:
            throw ReferenceSignerUnavailable("botocore_sign.py failed with status \(output.status): \(output.stderr)")
        }
        return try JSONDecoder().decode(BotocoreResult.self, from: output.stdoutData)
    }
}

/// The reference signer could not run; reported as a failure with the install command.
struct ReferenceSignerUnavailable: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
