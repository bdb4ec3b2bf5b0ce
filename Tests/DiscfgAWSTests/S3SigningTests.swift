@testable import DiscfgAWS
import Foundation
import Testing

/// The S3 requests discfg sends sign exactly as botocore's `S3SigV4Auth` signs them, and
/// S3's XML error answers become errors that name the bucket, the key and the action.
@Suite("S3 signing and errors")
struct S3SigningTests {
    @Test("S3 requests sign like botocore", arguments: [
        ("PUT", "snapshots", "prod/myapp.json", #"{"revision":3}"#),
        ("GET", "snapshots", "odd keys/a+b%c/ü/~!$&'()*,;=:@/x..y/./z", ""),
        ("HEAD", "snap.shots", "prod//double/slash", ""),
    ])
    func matchesBotocore(method: String, bucket: String, key: String, body: String) async throws {
        let client = S3Client(configuration: .init(region: "eu-west-1"), credentialProvider: MotoFreeCredentials.provider)
        defer { Task { try? await client.shutdown() } }
        let (url, host, path) = client.location(bucket: bucket, key: key)
        var headers = [HTTPHeaderField(name: "Host", value: host)]
        if method == "PUT" {
            headers.append(HTTPHeaderField(name: "Content-Type", value: "application/json"))
            headers.append(HTTPHeaderField(name: "x-amz-meta-discfg-revision", value: "3"))
            headers.append(HTTPHeaderField(name: "If-Match", value: #""9a0364b9e99bb480dd25e1f0284c8555""#))
        }
        let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", sessionToken: "tok/en+==")
        let ours = SigV4Signer(region: "eu-west-1", service: "s3", normalizesPath: false, addsContentSHA256Header: true).sign(
            SigV4Request(method: method, path: path, headers: headers),
            payload: .bytes(Data(body.utf8)), credentials: credentials,
            date: try #require(AWSTimestamp.parse(SigV4BotocoreTests.timestamp))
        )
        let reference = try await SigV4BotocoreTests.botocoreSign([
            "method": method, "url": url, "headers": headers.dropFirst().map { [$0.name, $0.value] }, "body": body,
            "access_key": credentials.accessKeyID, "secret_key": credentials.secretAccessKey,
            "session_token": "tok/en+==", "region": "eu-west-1", "service": "s3", "timestamp": SigV4BotocoreTests.timestamp,
        ])
        #expect(ours.canonicalRequest == reference.canonical_request)
        #expect(ours.authorization == reference.authorization, "botocore \(reference.botocore_version)")
    }

    @Test("a bucket with a dot is addressed by path on AWS, others by host; a custom endpoint always by path")
    func addressing() async throws {
        let aws = S3Client(configuration: .init(region: "eu-west-1"), credentialProvider: MotoFreeCredentials.provider)
        let local = S3Client(configuration: .init(region: "us-east-1", endpoint: URL(string: "http://127.0.0.1:4566")), credentialProvider: MotoFreeCredentials.provider)
        defer { Task { try? await aws.shutdown(); try? await local.shutdown() } }
        #expect(aws.location(bucket: "snaps", key: "p/a b.json").url == "https://snaps.s3.eu-west-1.amazonaws.com/p/a%20b.json")
        #expect(aws.location(bucket: "my.snaps", key: "k").url == "https://s3.eu-west-1.amazonaws.com/my.snaps/k")
        #expect(local.location(bucket: "snaps", key: "p/k").url == "http://127.0.0.1:4566/snaps/p/k")
        #expect(local.location(bucket: "snaps", key: "p/k").host == "127.0.0.1:4566")
    }

    @Test("S3's AccessDenied XML names the action and the object")
    func accessDenied() {
        let body = Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>AccessDenied</Code><Message>User: arn:aws:sts::1:assumed-role/fn is not authorized to perform: s3:PutObject on resource: &quot;arn:aws:s3:::snaps/p/app.json&quot; with an explicit deny in a resource-based policy</Message><RequestId>R</RequestId><HostId>H</HostId></Error>
            """.utf8)
        let error = S3Error.from(status: 403, body: body, action: "s3:PutObject", bucket: "snaps", key: "p/app.json")
        #expect(error.code == .accessDenied)
        #expect(error.description.hasPrefix("no permission to s3:PutObject on arn:aws:s3:::snaps/p/app.json"))
        #expect(error.message.contains("\"arn:aws:s3:::snaps/p/app.json\""))
    }

    @Test("error bodies are read boundedly: garbage, huge, unterminated and control characters")
    func hostileBodies() {
        let huge = Data(("<Error><Code>" + String(repeating: "A", count: 100_000) + "</Code></Error>").utf8)
        #expect(S3Error.from(status: 500, body: huge, action: "s3:GetObject", bucket: "b", key: "k").awsCode == "HTTP500")
        let late = Data((String(repeating: " ", count: 20_000) + "<Error><Code>NoSuchBucket</Code></Error>").utf8)
        #expect(S3Error.from(status: 404, body: late, action: "s3:GetObject", bucket: "b", key: "k").code == .noSuchKey)
        let open = Data("<Error><Code>NoSuchBucket".utf8)
        #expect(S3Error.from(status: 404, body: open, action: "s3:GetObject", bucket: "b", key: "k").awsCode == "HTTP404")
        let control = Data("<Error><Code>SlowDown</Code><Message>a\u{1b}[31mb\nc</Message></Error>".utf8)
        let slow = S3Error.from(status: 503, body: control, action: "s3:PutObject", bucket: "b", key: "k")
        #expect(slow.code == .throttling)
        #expect(slow.message == "a[31mbc")
        #expect(S3Error.from(status: 200, body: Data([0xff, 0xfe]), action: "s3:GetObject", bucket: "b", key: "k").code == .other)
    }
}

/// Credentials for tests that never reach AWS.
enum MotoFreeCredentials {
    static let provider = StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"))
}
