import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A signed, retrying client for the few Amazon S3 calls discfg makes: `GetObject` (with
/// `If-None-Match`), `HeadObject` and `PutObject` (with `If-Match` / `If-None-Match: *`).
///
/// Requests are signed with ``SigV4Signer`` the S3 way (the path is not normalized, the
/// payload hash goes in `x-amz-content-sha256`). With a custom endpoint (a local server,
/// a VPC endpoint) buckets are addressed by path, `ENDPOINT/BUCKET/KEY`; on AWS, by host,
/// `BUCKET.s3.REGION.amazonaws.com/KEY` (by path when the name has a dot, which a
/// virtual-host certificate does not cover).
///
/// ```swift
/// let s3 = S3Client(configuration: .init(region: "eu-west-1"), credentialProvider: chain)
/// let etag = try await s3.putObject(bucket: "snapshots", key: "prod/app.json", body: data,
///                                   contentType: "application/json", condition: .absent)
/// ```
public final class S3Client: Sendable {
    /// Where and how to talk to S3.
    public struct Configuration: Sendable {
        /// The signing region.
        public var region: String
        /// A custom endpoint (`http://127.0.0.1:5000`); nil for AWS's.
        public var endpoint: URL?
        /// Deadline for each attempt, its answer's body included.
        public var timeout: Duration
        /// Retries of throttling, 5xx and unreachable endpoints.
        public var retryPolicy: RetryPolicy
        /// The largest object `GetObject` reads; a larger one is refused unread.
        public var maxObjectBytes: Int

        /// Creates a configuration.
        public init(
            region: String,
            endpoint: URL? = nil,
            timeout: Duration = .seconds(10),
            retryPolicy: RetryPolicy = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(50), maxDelay: .seconds(2)),
            maxObjectBytes: Int = 64 << 20
        ) {
            self.region = region
            self.endpoint = endpoint
            self.timeout = timeout
            self.retryPolicy = retryPolicy
            self.maxObjectBytes = maxObjectBytes
        }

        /// The endpoint the environment names, the AWS way: `AWS_ENDPOINT_URL_S3`, then
        /// `AWS_ENDPOINT_URL`; nil for AWS's own.
        public static func endpoint(environment: [String: String]) -> URL? {
            [environment["AWS_ENDPOINT_URL_S3"], environment["AWS_ENDPOINT_URL"]]
                .compactMap { $0 }.first { !$0.isEmpty }.flatMap(URL.init(string:))
        }
    }

    /// The settings this client was created with.
    public let configuration: Configuration
    /// Where credentials come from for every attempt.
    public let credentialProvider: any CredentialProvider
    private let httpClient: HTTPClient
    private let signer: SigV4Signer
    private let now: @Sendable () -> Date

    /// Creates a client and its `HTTPClient`; call ``shutdown()`` when done.
    public init(configuration: Configuration, credentialProvider: any CredentialProvider, now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.credentialProvider = credentialProvider
        self.now = now
        self.signer = SigV4Signer(region: configuration.region, service: "s3", normalizesPath: false, addsContentSHA256Header: true)
        self.httpClient = HTTPClient.forAWS(timeout: configuration.timeout)
    }

    /// Closes the connection pool.
    public func shutdown() async throws {
        try await httpClient.shutdown()
    }

    deinit {
        httpClient.shutdown { _ in }
    }

    // MARK: - Operations

    /// Reads an object; with `ifNoneMatch` (an entity tag from an earlier read) an
    /// unchanged object answers ``S3GetResult/notModified`` and costs no body.
    ///
    /// - Throws: ``S3Error``: ``S3Error/Code/noSuchKey``, ``S3Error/Code/noSuchBucket``,
    ///   ``S3Error/Code/tooLarge`` past ``Configuration/maxObjectBytes`` (read no further).
    public func getObject(bucket: String, key: String, ifNoneMatch: String? = nil, deadline: ContinuousClock.Instant? = nil) async throws -> S3GetResult {
        var headers: [HTTPHeaderField] = []
        if let ifNoneMatch { headers.append(HTTPHeaderField(name: "If-None-Match", value: ifNoneMatch)) }
        let answer = try await send(S3Call(method: .GET, action: "s3:GetObject", bucket: bucket, key: key, headers: headers), deadline: deadline)
        if answer.status == 304 { return .notModified }
        return .object(S3Object(head: answer.head, body: answer.body))
    }

    /// The object's head, or nil when there is no object at `key` (or, as a `HEAD` cannot
    /// tell, no bucket).
    public func headObject(bucket: String, key: String, deadline: ContinuousClock.Instant? = nil) async throws -> S3ObjectHead? {
        do {
            return try await send(S3Call(method: .HEAD, action: "s3:GetObject", bucket: bucket, key: key), deadline: deadline).head
        } catch let error as S3Error where error.code == .noSuchKey {
            return nil
        }
    }

    /// Writes an object whole and returns its new entity tag.
    ///
    /// - Parameters:
    ///   - metadata: user metadata, sent as `x-amz-meta-NAME` (names in lowercase ASCII).
    ///   - condition: checked by S3 atomically with the write.
    /// - Throws: ``S3Error``; ``S3Error/Code/preconditionFailed`` when `condition` did not hold.
    @discardableResult
    public func putObject(
        bucket: String, key: String, body: Data, contentType: String, metadata: [String: String] = [:],
        condition: S3WriteCondition? = nil, deadline: ContinuousClock.Instant? = nil
    ) async throws -> String {
        var headers = [HTTPHeaderField(name: "Content-Type", value: contentType)]
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            headers.append(HTTPHeaderField(name: "x-amz-meta-\(name.lowercased())", value: value))
        }
        switch condition {
        case .absent?: headers.append(HTTPHeaderField(name: "If-None-Match", value: "*"))
        case .etag(let etag)?: headers.append(HTTPHeaderField(name: "If-Match", value: etag))
        case nil: break
        }
        let call = S3Call(method: .PUT, action: "s3:PutObject", bucket: bucket, key: key, headers: headers, body: body)
        return try await send(call, deadline: deadline).head.etag
    }

    // MARK: - Requests

    /// One call as the operations describe it.
    struct S3Call {
        var method: HTTPMethod
        var action: String
        var bucket: String
        var key: String
        var headers: [HTTPHeaderField] = []
        var body = Data()
    }

    /// A successful (2xx or 304) answer.
    struct Answer {
        var status: Int
        var head: S3ObjectHead
        var body: Data
    }

    /// The URL of `key` in `bucket` and the raw (decoded) path the signer encodes: the two
    /// must agree byte for byte, so both come from here.
    func location(bucket: String, key: String) -> (url: String, host: String, path: String) {
        let encodedKey = key.split(separator: "/", omittingEmptySubsequences: false).map { SigV4Signer.uriEncode(String($0)) }.joined(separator: "/")
        if let endpoint = configuration.endpoint, let host = endpoint.host {
            var authority = host
            if let port = endpoint.port { authority += ":\(port)" }
            let base = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
            let scheme = endpoint.scheme ?? "https"
            return ("\(scheme)://\(authority)\(base)/\(bucket)/\(encodedKey)", authority, "\(base)/\(bucket)/\(key)")
        }
        let suffix = configuration.region.hasPrefix("cn-") ? "amazonaws.com.cn" : "amazonaws.com"
        let regional = "s3.\(configuration.region).\(suffix)"
        if bucket.contains(".") {
            return ("https://\(regional)/\(bucket)/\(encodedKey)", regional, "/\(bucket)/\(key)")
        }
        return ("https://\(bucket).\(regional)/\(encodedKey)", "\(bucket).\(regional)", "/\(key)")
    }

    /// Sends `call`, retrying what may pass; every attempt ends by the configured
    /// timeout or `deadline`, whichever is first.
    func send(_ call: S3Call, deadline: ContinuousClock.Instant?) async throws -> Answer {
        let policy = configuration.retryPolicy
        var retries = 0
        while true {
            let failure: S3Error
            do {
                return try await attempt(call, deadline: deadline)
            } catch let error as S3Error {
                failure = error
            }
            guard failure.isRetryable, retries + 1 < policy.maxAttempts else { throw failure }
            let delay = policy.delay(forRetry: retries)
            if let deadline, ContinuousClock.now + delay + AWSJSONClient.minimumAttempt > deadline { throw failure }
            try await policy.sleep(delay)
            retries += 1
        }
    }

    private func attempt(_ call: S3Call, deadline: ContinuousClock.Instant?) async throws -> Answer {
        let started = ContinuousClock.now
        let cutoff = deadline.map { min($0, started + configuration.timeout) } ?? started + configuration.timeout
        let unreachable = { (reason: String) in
            S3Error(code: .unreachable, awsCode: "NetworkError", action: call.action, bucket: call.bucket, key: call.key, message: reason, httpStatus: nil)
        }
        guard cutoff > started else { throw unreachable("no time left before the deadline") }
        let credentials: AWSCredentials = try await credentialProvider.credentials()
        return try await withThrowingTaskGroup(of: Answer?.self) { group in
            group.addTask { try await self.exchange(call, credentials: credentials, timeout: cutoff - started) }
            group.addTask {
                try await Task.sleep(until: cutoff, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            do {
                guard let first = try await group.next(), let answer = first else {
                    throw unreachable("no answer within \(cutoff - started)")
                }
                return answer
            } catch let error as S3Error {
                throw error
            } catch let error as CancellationError {
                throw error
            } catch {
                throw unreachable(describeTransportError(error))
            }
        }
    }

    private func exchange(_ call: S3Call, credentials: AWSCredentials, timeout: Duration) async throws -> Answer {
        let (url, host, path) = location(bucket: call.bucket, key: call.key)
        var headers = [HTTPHeaderField(name: "Host", value: host)] + call.headers
        if call.method == .PUT { headers.append(HTTPHeaderField(name: "Content-Length", value: String(call.body.count))) }
        let signed = signer.sign(SigV4Request(method: call.method.rawValue, path: path, headers: headers),
                                 payload: .bytes(call.body), credentials: credentials, date: now())
        var request = HTTPClientRequest(url: url)
        request.method = call.method
        for field in signed.headers where field.name.lowercased() != "content-length" {
            request.headers.add(name: field.name, value: field.value)
        }
        request.headers.add(name: "User-Agent", value: "discfg")
        if call.method == .PUT { request.body = .bytes(ByteBuffer(bytes: call.body)) }

        let response = try await httpClient.execute(request, timeout: TimeAmount(timeout))
        let status = Int(response.status.code)
        let limit = (200..<300).contains(status) ? configuration.maxObjectBytes : 64 << 10
        if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > limit, call.method == .GET, (200..<300).contains(status) {
            throw S3Error(code: .tooLarge, awsCode: "TooLarge", action: call.action, bucket: call.bucket, key: call.key,
                          message: "\(length) bytes, more than the \(limit) read", httpStatus: status)
        }
        let body: Data
        do {
            body = Data(try await response.body.collect(upTo: limit).readableBytesView)
        } catch is NIOTooManyBytesError {
            throw S3Error(code: .tooLarge, awsCode: "TooLarge", action: call.action, bucket: call.bucket, key: call.key,
                          message: "more than the \(limit) bytes read", httpStatus: status)
        }
        guard (200..<300).contains(status) || status == 304 else {
            throw S3Error.from(status: status, body: body, action: call.action, bucket: call.bucket, key: call.key)
        }
        var metadata: [String: String] = [:]
        for (name, value) in response.headers where name.lowercased().hasPrefix("x-amz-meta-") {
            metadata[String(name.lowercased().dropFirst("x-amz-meta-".count))] = value
        }
        let head = S3ObjectHead(
            etag: response.headers.first(name: "ETag") ?? "",
            contentType: response.headers.first(name: "Content-Type"),
            contentLength: response.headers.first(name: "Content-Length").flatMap(Int.init),
            metadata: metadata
        )
        return Answer(status: status, head: head, body: body)
    }
}
