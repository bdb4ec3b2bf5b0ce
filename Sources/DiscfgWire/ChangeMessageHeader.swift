import DiscfgCore
import Foundation

/// The one spelling of a change's message on the wire: the request header REST clients
/// send it in (the remote store among them), and how its value is encoded.
///
/// A header holds printable ASCII, so the message travels as UTF-8 percent-encoded:
/// `%` itself, control characters and everything past ASCII as `%XX`; a plain ASCII
/// message is sent as it is.
public enum ChangeMessageHeader {
    /// The header's name.
    public static let name = "Discfg-Message"

    /// The characters sent as they are.
    private static let plain: CharacterSet = {
        var set = CharacterSet(charactersIn: Unicode.Scalar(0x20)...Unicode.Scalar(0x7E))
        set.remove("%")
        return set
    }()

    /// `message` as the header's value.
    public static func value(_ message: String) -> String {
        message.addingPercentEncoding(withAllowedCharacters: plain) ?? message
    }

    /// The message a header's value carries, checked (``Attribution/validate(message:)``);
    /// nil for an empty value.
    /// - Throws: `invalidArgument` for a value that does not decode as UTF-8, `tooLarge`
    ///   for a message past ``Attribution/maxMessageBytes``.
    public static func message(_ value: String) throws -> String? {
        // Whatever is not printable ASCII travels percent-encoded, so raw bytes past it are
        // refused rather than read in whichever encoding the header happened to carry.
        guard value.utf8.allSatisfy({ $0 < 0x80 }), let message = value.removingPercentEncoding else {
            throw DiscfgError.invalid("message", "the \(name) header is not percent-encoded UTF-8; write %25 for a percent sign")
        }
        guard !message.isEmpty else { return nil }
        try Attribution.validate(message: message)
        return message
    }
}
