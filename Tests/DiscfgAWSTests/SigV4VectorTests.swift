import DiscfgAWS
import Foundation
import Testing

/// One case of the AWS SigV4 test suite: a folder holding `NAME.req`, `.creq`, `.sts`, `.authz`, `.sreq`.
struct SigV4VectorCase: Sendable, CustomTestStringConvertible {
    /// Path relative to the suite root, e.g. `normalize-path/get-slash`.
    let relativePath: String

    var testDescription: String { relativePath }

    var name: String { (relativePath as NSString).lastPathComponent }

    func file(_ suffix: String) throws -> String {
        let url = SigV4VectorSuite.root.appendingPathComponent(relativePath).appendingPathComponent("\(name).\(suffix)")
        return String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }
}

/// Locates the bundled suite and parses its raw request files.
enum SigV4VectorSuite {
    static let accessKey = "AKIDEXAMPLE"
    static let secretKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    static let region = "us-east-1"
    static let service = "service"
    static let date = AWSTimestamp.parse("20150830T123600Z")!

    static var root: URL {
        Bundle.module.url(forResource: "aws-sig-v4-test-suite", withExtension: nil)!
    }

    /// Every folder (at any depth) that holds a `.req` named after itself.
    static func cases() -> [SigV4VectorCase] {
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var found: [SigV4VectorCase] = []
        let rootPath = root.standardizedFileURL.path
        for case let url as URL in enumerator where url.pathExtension == "req" {
            let folder = url.deletingLastPathComponent().standardizedFileURL
            guard folder.lastPathComponent == url.deletingPathExtension().lastPathComponent else { continue }
            let relative = String(folder.path.dropFirst(rootPath.count + 1))
            found.append(SigV4VectorCase(relativePath: relative))
        }
        return found.sorted { $0.relativePath < $1.relativePath }
    }

    /// Every `.req` file in the suite, whatever folder it is in, to prove none is left out.
    static func allRequestFiles() -> [String] {
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        return enumerator.compactMap { ($0 as? URL)?.pathExtension == "req" ? ($0 as? URL)?.lastPathComponent : nil }
    }

    /// Parses a raw HTTP request as the suite writes it: request line, headers (folded lines kept
    /// in the value with their newline), blank line, body.
    static func parseRequest(_ text: String) -> (request: SigV4Request, body: Data) {
        var lines = text.components(separatedBy: "\n")
        let requestLine = lines.removeFirst()
        let method = String(requestLine.prefix { $0 != " " })
        var target = String(requestLine.dropFirst(method.count + 1))
        if let range = target.range(of: " HTTP/", options: .backwards) {
            target = String(target[..<range.lowerBound])
        }
        var path = target
        var query = ""
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        }
        var headers: [HTTPHeaderField] = []
        var bodyLines: [String] = []
        var inBody = false
        for line in lines {
            if inBody {
                bodyLines.append(line)
            } else if line.isEmpty {
                inBody = true
            } else if line.first == " " || line.first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += "\n" + line
            } else if let colon = line.firstIndex(of: ":") {
                headers.append(HTTPHeaderField(name: String(line[..<colon]), value: String(line[line.index(after: colon)...])))
            }
        }
        let body = Data(bodyLines.joined(separator: "\n").utf8)
        return (SigV4Request(method: method, path: path, query: query, headers: headers), body)
    }
}

@Suite("SigV4 against the AWS test suite")
struct SigV4VectorTests {
    @Test("every .req file in the suite is a discovered case")
    func discoversEveryCase() {
        let cases = SigV4VectorSuite.cases()
        #expect(cases.count == SigV4VectorSuite.allRequestFiles().count)
        #expect(cases.count >= 31)
        let names = Set(cases.map(\.name))
        for required in ["get-utf8", "get-header-value-multiline", "get-slashes", "get-relative-relative",
                         "get-space", "post-sts-header-before", "post-sts-header-after"] {
            #expect(names.contains(required), "missing case \(required)")
        }
    }

    @Test("canonical request, string to sign and Authorization match byte for byte", arguments: SigV4VectorSuite.cases())
    func signsVector(_ vector: SigV4VectorCase) throws {
        let (request, body) = SigV4VectorSuite.parseRequest(try vector.file("req"))
        let signedRequest = try vector.file("sreq")

        // The suite's `post-sts-header-after` adds the token after signing: the token is in the
        // signed request (.sreq) but not in the request to sign (.req).
        let tokenLine = signedRequest.components(separatedBy: "\n").first { $0.lowercased().hasPrefix("x-amz-security-token:") }
        let token = tokenLine.map { String($0.drop { $0 != ":" }.dropFirst()) }
        let tokenSignedByRequest = request.headers.firstValue(named: "x-amz-security-token") != nil

        let credentials = AWSCredentials(
            accessKeyID: SigV4VectorSuite.accessKey,
            secretAccessKey: SigV4VectorSuite.secretKey,
            sessionToken: token
        )
        let signer = SigV4Signer(
            region: SigV4VectorSuite.region,
            service: SigV4VectorSuite.service,
            signsSecurityToken: tokenSignedByRequest
        )
        let result = signer.sign(request, payload: .bytes(body), credentials: credentials, date: SigV4VectorSuite.date)

        #expect(result.canonicalRequest == (try vector.file("creq")))
        #expect(result.stringToSign == (try vector.file("sts")))
        #expect(result.authorization == (try vector.file("authz")))
        if let token {
            #expect(result.headers.firstValue(named: "X-Amz-Security-Token") == token)
        }
        #expect(result.headers.firstValue(named: "Authorization") == result.authorization)
    }
}

@Suite("SigV4 signer details")
struct SigV4SignerTests {
    let credentials = AWSCredentials(accessKeyID: "AKID", secretAccessKey: "SECRET")

    @Test func timestampRendersUTC() {
        let date = AWSTimestamp.parse("20150830T123600Z")!
        #expect(AWSTimestamp(date).dateTime == "20150830T123600Z")
        #expect(AWSTimestamp(date).date == "20150830")
        #expect(AWSTimestamp(Date(timeIntervalSince1970: 951_782_400)).dateTime == "20000229T000000Z")
        #expect(AWSTimestamp(Date(timeIntervalSince1970: 0)).dateTime == "19700101T000000Z")
    }

    @Test func contentSHA256HeaderIsAddedAndSigned() {
        let request = SigV4Request(method: "PUT", path: "/", headers: [HTTPHeaderField(name: "Host", value: "h")])
        let signer = SigV4Signer(region: "r", service: "s", addsContentSHA256Header: true)
        let result = signer.sign(request, payload: .unsigned, credentials: credentials, date: Date(timeIntervalSince1970: 0))
        #expect(result.signedHeaders == "host;x-amz-content-sha256;x-amz-date")
        #expect(result.headers.firstValue(named: "x-amz-content-sha256") == "UNSIGNED-PAYLOAD")
        #expect(result.canonicalRequest.hasSuffix("\nUNSIGNED-PAYLOAD"))
    }

    @Test func precomputedHashEqualsHashingTheBody() {
        let body = Data("{\"a\":1}".utf8)
        let request = SigV4Request(method: "POST", path: "/", headers: [HTTPHeaderField(name: "Host", value: "h")])
        let signer = SigV4Signer(region: "r", service: "s")
        let date = Date(timeIntervalSince1970: 1_000)
        let fromBytes = signer.sign(request, payload: .bytes(body), credentials: credentials, date: date)
        let hash = fromBytes.canonicalRequest.components(separatedBy: "\n").last!
        let fromHash = signer.sign(request, payload: .sha256Hex(hash), credentials: credentials, date: date)
        #expect(fromBytes.authorization == fromHash.authorization)
    }

    @Test func sessionTokenIsSignedByDefault() {
        let request = SigV4Request(method: "POST", path: "/", headers: [HTTPHeaderField(name: "Host", value: "h")])
        var temporary = credentials
        temporary.sessionToken = "TOKEN"
        let result = SigV4Signer(region: "r", service: "s")
            .sign(request, payload: .bytes(Data()), credentials: temporary, date: Date(timeIntervalSince1970: 0))
        #expect(result.signedHeaders == "host;x-amz-date;x-amz-security-token")
        #expect(result.headers.firstValue(named: "X-Amz-Security-Token") == "TOKEN")
    }

    @Test func pathWithoutNormalizationKeepsSegments() {
        let request = SigV4Request(method: "GET", path: "/a//b/../c", headers: [HTTPHeaderField(name: "Host", value: "h")])
        let s3Style = SigV4Signer(region: "r", service: "s3", normalizesPath: false)
            .sign(request, payload: .unsigned, credentials: credentials, date: Date(timeIntervalSince1970: 0))
        #expect(s3Style.canonicalRequest.components(separatedBy: "\n")[1] == "/a//b/../c")
        let normalized = SigV4Signer(region: "r", service: "s")
            .sign(request, payload: .unsigned, credentials: credentials, date: Date(timeIntervalSince1970: 0))
        #expect(normalized.canonicalRequest.components(separatedBy: "\n")[1] == "/a/c")
    }

    @Test func urlInitializerAddsHostWithPortAndEncodesPathTwice() {
        let request = SigV4Request(method: "GET", url: URL(string: "http://127.0.0.1:8000/a%20b?x=1%202")!)
        #expect(request.headers.firstValue(named: "host") == "127.0.0.1:8000")
        #expect(request.path == "/a%20b")
        let result = SigV4Signer(region: "r", service: "s")
            .sign(request, payload: .unsigned, credentials: credentials, date: Date(timeIntervalSince1970: 0))
        let lines = result.canonicalRequest.components(separatedBy: "\n")
        #expect(lines[1] == "/a%2520b")
        #expect(lines[2] == "x=1%202")
    }
}
