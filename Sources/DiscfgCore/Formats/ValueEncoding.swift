import Foundation

/// How values are put in JSON and YAML text.
public enum ValueEncoding {
    /// A UTF-8 value as itself; anything else as base64 with encoding `base64`.
    public static func encode(_ value: Data) -> (text: String, encoding: String?) {
        if let text = String(validating: value, as: UTF8.self) { return (text, nil) }
        return (value.base64EncodedString(), "base64")
    }

    /// The bytes for a `value` and its `encoding`.
    public static func decode(_ text: String, encoding: String?) throws -> Data {
        switch encoding {
        case nil, "utf-8", "utf8": return Data(text.utf8)
        case "base64":
            guard let data = Data(base64Encoded: text) else { throw DiscfgError.invalid("value", "value is not valid base64") }
            return data
        case let other?: throw DiscfgError.invalid("encoding", "unknown value encoding \"\(other.debugEscaped)\"; use base64 or leave it out")
        }
    }
}
