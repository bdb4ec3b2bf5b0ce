import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import Synchronization

/// The heads of the answers the event loops give, made in this one place in HTTPTypes
/// with the router's own headers (the route's `ETag`, its JSON type, the length);
/// HTTP/1's form is made only at the wire (``http1(_:)``), with the `Date` and `Server`
/// that Hummingbird's HTTP/1 channel gives the router's answers.
enum ResponseHeads {
    /// `200` with an item's envelope, as `GET keys/{key}` answers.
    static func item(_ answer: ItemAnswer) -> HTTPResponse {
        var fields = HTTPFields()
        fields.reserveCapacity(3)
        fields.append(HTTPField(name: .eTag, value: answer.etag))
        fields.append(jsonType)
        fields.append(HTTPField(name: .contentLength, value: String(answer.body.readableBytes)))
        return HTTPResponse(status: .ok, headerFields: fields)
    }

    /// The JSON type, checked once.
    private static let jsonType = HTTPField(name: .contentType, value: APIResponse.jsonContentType)

    /// `304` for a read whose `If-None-Match` names the item's entity tag.
    static func notModified(_ answer: ItemAnswer) -> HTTPResponse {
        HTTPResponse(status: .notModified, headerFields: [.eTag: answer.etag])
    }

    /// An answer whose body is an envelope (a write's, or an error's), with `fields`.
    static func envelope(_ status: HTTPResponse.Status, _ fields: HTTPFields, body: ByteBuffer) -> HTTPResponse {
        var fields = fields
        fields[.contentType] = APIResponse.jsonContentType
        fields[.contentLength] = String(body.readableBytes)
        return HTTPResponse(status: status, headerFields: fields)
    }

    /// `response` as HTTP/1.1 sends it, dated now.
    static func http1(_ response: HTTPResponse) -> HTTPResponseHead {
        // The names are HTTPTypes' (checked once, ASCII), so the fields go in whole rather
        // than through `HTTPHeaders.add`, which checks each name again.
        var fields: [(String, String)] = []
        fields.reserveCapacity(response.headerFields.count + 2)
        for field in response.headerFields { fields.append((field.name.rawName, field.value)) }
        fields.append(("Date", HTTPDateCache.value(time(nil))))
        fields.append(("Server", DiscfgServer.serverName))
        let status = HTTPResponseStatus(statusCode: response.status.code, reasonPhrase: response.status.reasonPhrase)
        return HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(fields))
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
