import Foundation
import HTTPTypes
import NIOCore
import Synchronization

/// The heads of the answers the event loops give, decided in this one place in HTTPTypes
/// with the router's own headers (the route's `ETag`, its JSON type, the length);
/// HTTP/1's bytes are made only at the wire (``Wire``), with the `Date` and `Server`
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
        var fields = HTTPFields()
        fields.append(HTTPField(name: .eTag, value: answer.etag))
        return HTTPResponse(status: .notModified, headerFields: fields)
    }

    /// An answer whose body is an envelope (a write's, or an error's), with `fields`.
    static func envelope(_ status: HTTPResponse.Status, _ fields: HTTPFields, body: ByteBuffer) -> HTTPResponse {
        var fields = fields
        fields.reserveCapacity(fields.count + 2)
        fields.append(jsonType)
        fields.append(HTTPField(name: .contentLength, value: String(body.readableBytes)))
        return HTTPResponse(status: status, headerFields: fields)
    }

    /// The head of the answer to a write the event loop took.
    enum WriteHead {
        /// A change made: `201` or `200` with its `ETag`, headed as ``envelope(_:_:body:)``
        /// heads it.
        case change(HTTPResponse.Status, etag: String)
        /// A refusal, with the fields of its error.
        case refusal(HTTPResponse)

        var status: HTTPResponse.Status {
            switch self {
            case .change(let status, _): status
            case .refusal(let response): response.status
            }
        }

        /// The head in HTTPTypes, for an answer of `body`.
        func response(body: ByteBuffer) -> HTTPResponse {
            switch self {
            case .change(let status, let etag): ResponseHeads.envelope(status, [.eTag: etag], body: body)
            case .refusal(let response): response
            }
        }
    }

    /// HTTP/1.1's bytes for the answers one connection gives on its event loop: the head
    /// of ``ResponseHeads`` with `Server` (and `Connection: close` when the connection is
    /// winding down), dated, then the body, in one buffer written below the HTTP encoder.
    ///
    /// An item's head is the same for every read of it but for `Date`, so it is made once
    /// per item answer (``ItemAnswer/serial``, new for each revision of an item) and kept
    /// in a few slots; `Date` is made once per second. A steady read copies bytes made
    /// before, and builds no fields.
    struct Wire {
        /// The head bytes of one item answer, up to and including `Date: `.
        private struct ItemHeads {
            var serial: UInt64
            var ok: ByteBuffer
            var notModified: ByteBuffer
        }

        private var items: [ItemHeads?] = [nil, nil, nil, nil]
        private var second = -1
        /// `Date`'s value for ``second`` and the blank line after it.
        private var dateLine = ByteBuffer()

        init() {}

        /// The answer to a read of `answer`: `304` when `notModified`, else `200` with its
        /// envelope; dated `second` (seconds since 1970).
        mutating func item(_ answer: ItemAnswer, notModified: Bool, closing: Bool, second: Int) -> ByteBuffer {
            if closing {
                let response = notModified ? ResponseHeads.notModified(answer) : ResponseHeads.item(answer)
                return self.answer(response, body: notModified ? nil : answer.body, closing: true, second: second)
            }
            let slot = Int(truncatingIfNeeded: answer.serial & 3)
            let heads: ItemHeads
            if let kept = items[slot], kept.serial == answer.serial {
                heads = kept
            } else {
                heads = ItemHeads(
                    serial: answer.serial,
                    ok: Self.head(ResponseHeads.item(answer), closing: false),
                    notModified: Self.head(ResponseHeads.notModified(answer), closing: false)
                )
                items[slot] = heads
            }
            return joined(notModified ? heads.notModified : heads.ok, body: notModified ? nil : answer.body, second: second)
        }

        /// `response` with `body`, dated `second`.
        mutating func answer(_ response: HTTPResponse, body: ByteBuffer?, closing: Bool, second: Int) -> ByteBuffer {
            joined(Self.head(response, closing: closing), body: body, second: second)
        }

        /// The answer to a write, `head` with `body`, dated `second`. A change's head is
        /// written straight to the bytes, with no fields built: its `ETag`, the JSON type
        /// and the length, in the order ``ResponseHeads/envelope(_:_:body:)`` gives them.
        mutating func write(_ head: WriteHead, body: ByteBuffer, closing: Bool, second: Int) -> ByteBuffer {
            guard case .change(let status, let etag) = head else {
                return answer(head.response(body: body), body: body, closing: closing, second: second)
            }
            refreshDate(second)
            var bytes = Self.allocator.buffer(capacity: 192 + body.readableBytes)
            switch status {
            case .created: bytes.writeImmutableBuffer(Self.createdUpToTag)
            case .ok: bytes.writeImmutableBuffer(Self.okUpToTag)
            default: bytes.writeImmutableBuffer(Self.upToTag(status))
            }
            bytes.writeString(etag)
            bytes.writeImmutableBuffer(Self.tagToLength)
            bytes.writeString(String(body.readableBytes))
            bytes.writeImmutableBuffer(closing ? Self.closingAfterLength : Self.afterLength)
            bytes.writeImmutableBuffer(dateLine)
            bytes.writeImmutableBuffer(body)
            return bytes
        }

        // A change's head in the pieces between its three values (the tag, the length and
        // the date), each made once: a handful of copies per answer, not a write per token.
        private static let createdUpToTag = upToTag(.created)
        private static let okUpToTag = upToTag(.ok)
        private static let tagToLength = piece { bytes in
            bytes.writeStaticString("\r\nContent-Type: ")
            bytes.writeString(APIResponse.jsonContentType)
            bytes.writeStaticString("\r\nContent-Length: ")
        }
        private static let afterLength = afterLength(closing: false)
        private static let closingAfterLength = afterLength(closing: true)

        private static func afterLength(closing: Bool) -> ByteBuffer {
            piece { bytes in
                bytes.writeStaticString("\r\n")
                writeTrailer(closing: closing, to: &bytes)
            }
        }

        private static func upToTag(_ status: HTTPResponse.Status) -> ByteBuffer {
            piece { bytes in
                writeStatusLine(status, to: &bytes)
                bytes.writeStaticString("ETag: ")
            }
        }

        private static func piece(_ write: (inout ByteBuffer) -> Void) -> ByteBuffer {
            var bytes = allocator.buffer(capacity: 96)
            write(&bytes)
            return bytes
        }

        private mutating func joined(_ head: ByteBuffer, body: ByteBuffer?, second: Int) -> ByteBuffer {
            refreshDate(second)
            var bytes = Self.allocator.buffer(capacity: head.readableBytes + dateLine.readableBytes + (body?.readableBytes ?? 0))
            bytes.writeImmutableBuffer(head)
            bytes.writeImmutableBuffer(dateLine)
            if let body { bytes.writeImmutableBuffer(body) }
            return bytes
        }

        private mutating func refreshDate(_ second: Int) {
            guard second != self.second else { return }
            self.second = second
            dateLine.clear()
            dateLine.writeString(HTTPDateCache.value(second))
            dateLine.writeStaticString("\r\n\r\n")
        }

        private static let allocator = ByteBufferAllocator()

        /// The status line, `response`'s fields, `Server`, `Connection: close` when
        /// `closing`, and `Date: ` awaiting its value. HTTPTypes checked the names and
        /// values when the fields were made.
        static func head(_ response: HTTPResponse, closing: Bool) -> ByteBuffer {
            var bytes = allocator.buffer(capacity: 160)
            writeStatusLine(response.status, to: &bytes)
            for field in response.headerFields {
                bytes.writeString(field.name.rawName)
                bytes.writeStaticString(": ")
                bytes.writeString(field.value)
                bytes.writeStaticString("\r\n")
            }
            writeTrailer(closing: closing, to: &bytes)
            return bytes
        }

        private static func writeStatusLine(_ status: HTTPResponse.Status, to bytes: inout ByteBuffer) {
            bytes.writeStaticString("HTTP/1.1 ")
            let code = status.code
            bytes.writeInteger(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: code / 100 % 10))
            bytes.writeInteger(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: code / 10 % 10))
            bytes.writeInteger(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: code % 10))
            bytes.writeInteger(UInt8(ascii: " "))
            bytes.writeString(status.reasonPhrase)
            bytes.writeStaticString("\r\n")
        }

        /// `Server`, `Connection: close` when `closing`, and `Date: ` awaiting its value.
        private static func writeTrailer(closing: Bool, to bytes: inout ByteBuffer) {
            bytes.writeStaticString("Server: ")
            bytes.writeString(DiscfgServer.serverName)
            bytes.writeStaticString("\r\n")
            if closing { bytes.writeStaticString("Connection: close\r\n") }
            bytes.writeStaticString("Date: ")
        }
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
