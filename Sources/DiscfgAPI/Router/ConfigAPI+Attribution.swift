import DiscfgCore
import HTTPTypes
import Hummingbird

extension ConfigAPI {
    /// The header a change's message travels in (``ChangeMessageHeader``).
    static let messageField = HTTPField.Name(ChangeMessageHeader.name)!

    /// Who makes the changes of `request` and why: the principal of the caller it was
    /// authenticated as, never a header or the body; the message from the
    /// `Discfg-Message` header, refused (and nothing changed) when too long or malformed.
    /// Reads change nothing, so they ignore it.
    static func attribution(of request: Request, by caller: Caller) throws -> Attribution {
        guard request.method != .get, request.method != .head else { return Attribution(principal: caller.principal) }
        return Attribution(principal: caller.principal, message: try request.headers[messageField].flatMap(ChangeMessageHeader.message))
    }
}
