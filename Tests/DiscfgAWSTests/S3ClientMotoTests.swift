import DiscfgAWS
import DiscfgTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// ``S3Client`` against moto's S3: conditional reads and writes, metadata, odd keys, and
/// every failure a publisher meets (no bucket, a denying policy, a huge object, a dead
/// or silent endpoint).
@Suite("S3 client against moto")
struct S3ClientMotoTests {
    @Test("put, head and get carry the body, the content type and the metadata; a conditional get of an unchanged object is 304")
    func roundTrip() async throws {
        let moto = try await SharedMotoServer.shared.server()
        let s3 = MotoS3.client(moto)
        defer { Task { try? await s3.shutdown() } }
        let bucket = MotoS3.uniqueBucket()
        try await MotoS3.createBucket(bucket, on: moto)
        let body = Data(#"{"revision":3}"#.utf8)
        let etag = try await s3.putObject(bucket: bucket, key: "prod/app.json", body: body, contentType: "application/json",
                                          metadata: ["discfg-revision": "3"], condition: .absent)
        #expect(etag.hasPrefix("\""))
        let head = try #require(try await s3.headObject(bucket: bucket, key: "prod/app.json"))
        #expect(head.etag == etag)
        #expect(head.metadata["discfg-revision"] == "3")
        #expect(head.contentType == "application/json")
        guard case .object(let object) = try await s3.getObject(bucket: bucket, key: "prod/app.json") else {
            Issue.record("expected the object"); return
        }
        #expect(object.body == body)
        #expect(object.head.etag == etag)
        #expect(try await s3.getObject(bucket: bucket, key: "prod/app.json", ifNoneMatch: etag) == .notModified)
        try await s3.putObject(bucket: bucket, key: "prod/app.json", body: Data("{}".utf8), contentType: "application/json",
                               condition: .etag(etag))
        guard case .object(let changed) = try await s3.getObject(bucket: bucket, key: "prod/app.json", ifNoneMatch: etag) else {
            Issue.record("a changed object must be read again"); return
        }
        #expect(changed.body == Data("{}".utf8))
        #expect(try await s3.headObject(bucket: bucket, key: "prod/missing.json") == nil)
    }

    @Test("conditional writes: If-None-Match * on an existing object and a stale If-Match are refused, and nothing changes")
    func conditions() async throws {
        let moto = try await SharedMotoServer.shared.server()
        let s3 = MotoS3.client(moto)
        defer { Task { try? await s3.shutdown() } }
        let bucket = MotoS3.uniqueBucket()
        try await MotoS3.createBucket(bucket, on: moto)
        let first = try await s3.putObject(bucket: bucket, key: "k", body: Data("1".utf8), contentType: "text/plain")
        let second = try await s3.putObject(bucket: bucket, key: "k", body: Data("2".utf8), contentType: "text/plain", condition: .etag(first))
        for condition in [S3WriteCondition.absent, .etag(first)] {
            let error = try await #require(throws: S3Error.self) {
                try await s3.putObject(bucket: bucket, key: "k", body: Data("3".utf8), contentType: "text/plain", condition: condition)
            }
            #expect(error.code == .preconditionFailed)
            #expect(error.description.contains("s3://\(bucket)/k changed while it was being written"))
        }
        #expect(try await s3.headObject(bucket: bucket, key: "k")?.etag == second)
    }

    @Test("a bucket that does not exist, a missing key and a policy that denies PutObject get their own messages")
    func refusals() async throws {
        let moto = try await SharedMotoServer.shared.server()
        let s3 = MotoS3.client(moto)
        defer { Task { try? await s3.shutdown() } }
        let missing = MotoS3.uniqueBucket("nobucket")
        let noBucket = try await #require(throws: S3Error.self) {
            try await s3.putObject(bucket: missing, key: "p/a.json", body: Data(), contentType: "application/json")
        }
        #expect(noBucket.code == .noSuchBucket)
        #expect(noBucket.description.hasPrefix("bucket \(missing) does not exist"))

        let bucket = MotoS3.uniqueBucket()
        try await MotoS3.createBucket(bucket, on: moto)
        let noKey = try await #require(throws: S3Error.self) { try await s3.getObject(bucket: bucket, key: "none") }
        #expect(noKey.code == .noSuchKey)

        try await MotoS3.deny("s3:PutObject", on: bucket, moto: moto)
        let denied = try await #require(throws: S3Error.self) {
            try await s3.putObject(bucket: bucket, key: "p/a.json", body: Data("{}".utf8), contentType: "application/json")
        }
        #expect(denied.code == .accessDenied)
        #expect(denied.description.hasPrefix("no permission to s3:PutObject on arn:aws:s3:::\(bucket)/p/a.json"))
    }

    @Test("keys with spaces, plus, percent, unicode, reserved characters and empty segments round-trip", arguments: [
        "a b/c+d%20e/ü/日本",
        "~!$&'()*,;=:@[]",
        "p//x/./y/../z",
        "trailing/",
    ])
    func oddKeys(key: String) async throws {
        let moto = try await SharedMotoServer.shared.server()
        let s3 = MotoS3.client(moto)
        defer { Task { try? await s3.shutdown() } }
        let bucket = MotoS3.uniqueBucket()
        try await MotoS3.createBucket(bucket, on: moto)
        try await s3.putObject(bucket: bucket, key: key, body: Data(key.utf8), contentType: "text/plain")
        guard case .object(let object) = try await s3.getObject(bucket: bucket, key: key) else {
            Issue.record("expected the object"); return
        }
        #expect(object.body == Data(key.utf8))
    }

    @Test("an object larger than the limit is refused, not read whole")
    func hugeObject() async throws {
        let moto = try await SharedMotoServer.shared.server()
        let writer = MotoS3.client(moto)
        let reader = MotoS3.client(moto, maxObjectBytes: 1024)
        defer { Task { try? await writer.shutdown(); try? await reader.shutdown() } }
        let bucket = MotoS3.uniqueBucket()
        try await MotoS3.createBucket(bucket, on: moto)
        try await writer.putObject(bucket: bucket, key: "big", body: Data(repeating: 0x41, count: 1 << 20), contentType: "text/plain")
        let error = try await #require(throws: S3Error.self) { try await reader.getObject(bucket: bucket, key: "big") }
        #expect(error.code == .tooLarge)
    }

    @Test("a closed port and a server that never answers fail as unreachable within the timeout")
    func unreachable() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        for port in [try MotoServer.freeLoopbackPort(), silent.port] {
            let s3 = S3Client(
                configuration: .init(region: "us-east-1", endpoint: URL(string: "http://127.0.0.1:\(port)"), timeout: .milliseconds(500),
                                     retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1), maxDelay: .milliseconds(2))),
                credentialProvider: MotoS3.credentials
            )
            let started = ContinuousClock.now
            let error = try await #require(throws: S3Error.self) { try await s3.headObject(bucket: "snaps", key: "k") }
            #expect(error.code == .unreachable)
            #expect(error.description.contains("S3 endpoint unreachable for s3:GetObject on s3://snaps/k"))
            #expect(ContinuousClock.now - started < .seconds(3))
            try? await s3.shutdown()
        }
    }
}

/// A loopback socket that listens and never accepts: connections complete in the
/// kernel and then hear nothing, like an endpoint that hangs.
struct SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let fd = fd
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw ListenFailed() }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(fd) }

    struct ListenFailed: Error {}
}
