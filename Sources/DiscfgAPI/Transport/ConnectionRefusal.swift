import DiscfgCore
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// The answer to a request on a REST connection over the server's limit
/// (``DiscfgNetwork/ConnectionCap``): `503` with `Retry-After`, closing the connection,
/// and the error envelope every other error has.
enum ConnectionRefusal {
    /// The action the refusal's envelope names.
    static let action = "connect"

    /// The refusal's head.
    static let head: HTTPResponseHead = HTTPResponseHead(parts.response)

    /// The refusal's body; each answer writes a copy of it (a `ByteBuffer` shares its
    /// storage until written to).
    static let body: ByteBuffer = parts.body

    private static let parts: (response: HTTPResponse, body: ByteBuffer) = {
        let error = DiscfgError(
            .unavailable, "the server is serving as many connections as it allows (--max-connections); retry in a second"
        )
        let parts = APIResponse.errorParts(error, action: action)
        var fields = parts.headers
        fields[.contentType] = APIResponse.jsonContentType
        fields[.contentLength] = String(parts.body.readableBytes)
        fields[.retryAfter] = "1"
        fields[.connection] = "close"
        return (HTTPResponse(status: parts.status, headerFields: fields), parts.body)
    }()
}
