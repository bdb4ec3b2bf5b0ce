import DiscfgCore
import DiscfgWire
import HTTPTypes
import Hummingbird

extension ConfigAPI {
    /// The header a change's message travels in (``ChangeMessageHeader``).
    static let messageField = HTTPField.Name(ChangeMessageHeader.name)!

    /// Why `request` makes its changes: the `Discfg-Message` header, refused (and
    /// nothing changed) when too long or malformed. Reads change nothing, so they ignore
    /// it. Who makes them is the caller it was authenticated as, never a header or the
    /// body (``Performer``).
    static func message(of request: Request) throws -> String? {
        guard request.method != .get, request.method != .head else { return nil }
        return try request.headers[messageField].flatMap(ChangeMessageHeader.message)
    }
}
