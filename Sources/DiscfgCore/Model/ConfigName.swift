/// The name of a configuration: a namespace of keys such as `myapp-prod`.
///
/// Names are 1 to 200 characters of `A-Z a-z 0-9 _ . -`, so they are safe in URLs,
/// file names and DynamoDB keys alike.
public struct ConfigName: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// The longest name allowed.
    public static let maxLength = 200

    /// The validated name.
    public let rawValue: String

    /// Validates `rawValue` as a config name.
    /// - Throws: ``DiscfgError`` with code `invalidArgument` naming what is wrong.
    public init(_ rawValue: String) throws {
        guard !rawValue.isEmpty else {
            throw DiscfgError.invalid("config", "config name must not be empty")
        }
        guard rawValue.utf8.count <= Self.maxLength else {
            throw DiscfgError.invalid("config", "config name is longer than \(Self.maxLength) characters")
        }
        if let bad = rawValue.unicodeScalars.first(where: { !Self.isAllowed($0) }) {
            throw DiscfgError.invalid(
                "config",
                "config name \"\(rawValue.debugEscaped)\" contains \"\(String(bad).debugEscaped)\"; use only letters, digits, '_', '.' and '-'"
            )
        }
        self.rawValue = rawValue
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_", ".", "-": true
        default: false
        }
    }

    public var description: String { rawValue }

    public static func < (lhs: ConfigName, rhs: ConfigName) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension String {
    /// The string with control characters escaped, safe to quote in one line of output.
    package var debugEscaped: String {
        var out = ""
        for scalar in unicodeScalars {
            if scalar.properties.generalCategory == .control || scalar == "\"" {
                out += scalar == "\"" ? "\\\"" : "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
