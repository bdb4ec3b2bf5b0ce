import DiscfgCore
import Foundation
import Logging
import NIOCore
import HTTPTypes
import NIOHTTP1
import Synchronization

/// Key reads answered on the event loop, from ``ConfigViews``, without a hop to the
/// router or the store.
///
/// Only an HTTP/1.1 `GET /v1/{config}/keys/{key}` with no query, no percent-escapes, no
/// body, no `Origin`, `Connection` or `Expect` header, and at most a plain
/// `If-None-Match: "N"` is a candidate. Its answer is the route's own
/// (``ConfigAPI/itemBody(_:in:)``, the same headers), given only when the cached token
/// records admit the caller and the view is current. Every other request, and every
/// candidate the view cannot answer, goes on to the router unchanged, which answers it
/// and any refusal as always.
final class KeyReads: Sendable {
    let views: ConfigViews
    let authenticator: Authenticator
    /// The store as the router sees it (timed, and telling the views of each write).
    let store: any ConfigStore
    let logger: Logger
    let browserGuard: BrowserGuard
    /// The route as the router's metrics name it.
    static let route = Endpoint.getKey.path.replacingOccurrences(of: "{key}", with: "**")

    init(views: ConfigViews, authenticator: Authenticator, store: any ConfigStore, logger: Logger, browserGuard: BrowserGuard) {
        self.views = views
        self.authenticator = authenticator
        self.store = store
        self.logger = logger
        self.browserGuard = browserGuard
    }

    /// A read the event loop may answer, or a write it may hand to the store, once its
    /// request has ended.
    struct Candidate {
        var configName: Substring
        var keyPath: String
        var uri: String
        var authorization: String?
        var ifNoneMatch: Revision?
        /// A write's: the body's length and its content type.
        var contentLength = 0
        var contentType: String?
        var start: ContinuousClock.Instant
        var isWrite: Bool
    }

    /// The read or write `head` asks for, if the event loop may take it: a `GET`, or a
    /// `PUT` of at most ``Limits/maxValueBytes`` with no conditions and no TTL.
    func candidate(_ head: HTTPRequestHead) -> Candidate? {
        let isWrite = head.method == .PUT
        guard head.method == .GET || isWrite, head.version == .http1_1 else { return nil }
        let uri = head.uri
        // Offsets of the slash ending the config name, and of the key's leading slash.
        let split: (configEnd: Int, keyStart: Int)?? = uri.utf8.withContiguousStorageIfAvailable { bytes in
            let count = bytes.count
            guard count > 11, bytes[0] == UInt8(ascii: "/"), bytes[1] == UInt8(ascii: "v"), bytes[2] == UInt8(ascii: "1"),
                  bytes[3] == UInt8(ascii: "/"), bytes[count - 1] != UInt8(ascii: "/")
            else { return nil }
            var index = 4
            while index < count, bytes[index] != UInt8(ascii: "/") { index += 1 }
            let configEnd = index
            guard configEnd > 4, configEnd + 6 < count, Self.matches(bytes, at: configEnd, "/keys/") else { return nil }
            for byte in bytes[(configEnd + 6)...] where byte == UInt8(ascii: "?") || byte == UInt8(ascii: "%") { return nil }
            return (configEnd, configEnd + 5)
        }
        guard case let (configEnd, keyStart)?? = split else { return nil }
        let utf8 = uri.utf8
        let configName = Substring(utf8[utf8.index(utf8.startIndex, offsetBy: 4)..<utf8.index(utf8.startIndex, offsetBy: configEnd)])
        let keyPath = String(Substring(utf8[utf8.index(utf8.startIndex, offsetBy: keyStart)...]))
        var authorization: String?
        var ifNoneMatch: Revision?
        var contentLength: Int?
        var contentType: String?
        for (name, value) in head.headers {
            switch name.utf8.count {
            case 4 where Self.named(name, "host"):
                guard browserGuard.admitsHost(value) else { return nil }
            case 6 where Self.named(name, "origin"), 6 where Self.named(name, "expect"): return nil
            case 10 where Self.named(name, "connection"): return nil
            case 13 where Self.named(name, "authorization"): authorization = value
            case 13 where Self.named(name, "if-none-match"):
                guard !isWrite, let revision = Self.plainTag(value) else { return nil }
                ifNoneMatch = revision
            case 8 where Self.named(name, "if-match"): return nil
            case 12 where Self.named(name, "content-type"): contentType = value
            case 14 where Self.named(name, "content-length"):
                guard contentLength == nil, let length = Int(value), length >= 0, length <= (isWrite ? Limits.maxValueBytes : 0) else { return nil }
                contentLength = length
            case 17 where Self.named(name, "transfer-encoding"): return nil
            default: break
            }
        }
        guard !isWrite || contentLength != nil else { return nil }
        return Candidate(
            configName: configName, keyPath: keyPath, uri: uri, authorization: authorization, ifNoneMatch: ifNoneMatch,
            contentLength: contentLength ?? 0, contentType: contentType, start: .now, isWrite: isWrite
        )
    }

    /// What a write the event loop takes needs: the config, key, value and options,
    /// checked as the route checks them; nil when the router should judge the request
    /// (an invalid name or key, a caller the cached token records do not admit).
    func write(_ candidate: Candidate, body: ByteBuffer, peerIsLoopback: Bool?) -> (config: ConfigName, key: Key, value: Data, options: SetOptions)? {
        guard let config = try? ConfigName(String(candidate.configName)), let key = try? Key(candidate.keyPath),
              let caller = authenticator.cachedCaller(authorization: candidate.authorization, peerIsLoopback: peerIsLoopback),
              caller.allows(.write, on: config)
        else { return nil }
        let options = SetOptions(conditions: [], ttlSeconds: nil, contentType: ConfigAPI.storedContentType(candidate.contentType))
        guard (try? options.validate()) != nil else { return nil }
        return (config, key, Data(body.readableBytesView), options)
    }

    /// The answer to a write the store finished: the route's.
    func answer(write result: Result<Event, any Error>, in config: ConfigName, candidate: Candidate, log: AccessLog.Buffer?) -> (head: HTTPResponseHead, body: ByteBuffer) {
        let status: HTTPResponse.Status
        var fields: [(String, String)]
        let body: ByteBuffer
        switch result {
        case .success(let change):
            let answer = ConfigAPI.setAnswer(change, in: config)
            (status, fields, body) = (answer.status, [("ETag", answer.etag)], answer.body)
        case .failure(let error):
            let shown = (error as? DiscfgError).map { ErrorEnvelopeMiddleware<APIRequestContext>.shown($0, logger: logger) }
                ?? ErrorEnvelopeMiddleware<APIRequestContext>.internalError(error, logger: logger)
            let parts = APIResponse.errorParts(shown, action: Endpoint.setKey.action)
            (status, fields, body) = (parts.status, parts.headers.map { ($0.name.rawName, $0.value) }, parts.body)
        }
        let second = time(nil)
        fields += [
            ("Content-Type", APIResponse.jsonContentType), ("Content-Length", String(body.readableBytes)),
            ("Date", HTTPDateCache.value(second)), ("Server", DiscfgServer.serverName),
        ]
        log?.append(AccessLog.Record(kind: .write, path: candidate.uri, status: status.code, elapsed: .now - candidate.start))
        return (HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status.code), headers: HTTPHeaders(fields)), body)
    }

    /// The answer to `candidate`, noted in `log`; nil for the router to give.
    func answer(_ candidate: Candidate, peerIsLoopback: Bool?, log: AccessLog.Buffer?) -> (head: HTTPResponseHead, body: ByteBuffer?)? {
        let second = time(nil)
        guard case .found(let config, let revision, let answer) = views.lookup(
            keyPath: candidate.keyPath, configName: candidate.configName, second: second, date: { HTTPDateCache.value(second) }
        ),
            let caller = authenticator.cachedCaller(authorization: candidate.authorization, peerIsLoopback: peerIsLoopback),
            caller.allows(.read, on: config)
        else { return nil }
        let reply: (head: HTTPResponseHead, body: ByteBuffer?) = candidate.ifNoneMatch == revision ? (answer.notModified, nil) : (answer.ok, answer.body)
        log?.append(AccessLog.Record(kind: .viewRead, path: candidate.uri, status: Int(reply.head.status.code), elapsed: .now - candidate.start))
        return reply
    }

    /// A plain entity tag, `"N"`, as a revision; nil for anything else (the router reads those).
    private static func plainTag(_ value: String) -> Revision? {
        let bytes = value.utf8
        guard bytes.count >= 3, bytes.count <= 22, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return nil }
        var number: UInt64 = 0
        for byte in bytes.dropFirst().dropLast() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = number.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            number = sum
        }
        return number <= Revision.max.rawValue ? Revision(number) : nil
    }

    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        for index in 0..<count where bytes[offset + index] != text.utf8Start[index] { return false }
        return true
    }

    /// Whether a header name is `lowercase`, ignoring ASCII case.
    private static func named(_ name: String, _ lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard name.utf8.count == count else { return false }
        var index = 0
        for byte in name.utf8 {
            guard lowercased(byte) == lowercase.utf8Start[index] else { return false }
            index += 1
        }
        return true
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}

/// The `Date` header's value.
enum HTTPDateCache {
    private static let cached = Mutex<(second: Int, text: String)>((-1, ""))

    /// The value for `second`, formatted once a second.
    static func value(_ second: Int) -> String {
        if let text = cached.withLock({ $0.second == second ? $0.text : nil }) { return text }
        let text = format(second)
        cached.withLock { $0 = (second, text) }
        return text
    }

    /// RFC 9110's IMF-fixdate, such as `Mon, 23 Nov 2026 12:12:37 GMT`.
    static func format(_ second: Int) -> String {
        var seconds = time_t(second)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
