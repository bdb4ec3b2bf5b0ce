/// An RFC 6901 JSON Pointer: a path of reference tokens naming one value in a JSON document.
///
/// `""` names the whole document; otherwise each token follows a `/`, with `~0` standing for
/// `~` and `~1` for `/`. Against an object a token is a member name (compared scalar by scalar,
/// like ``JSONObject`` keys); against an array it must be `0` or digits without a leading zero,
/// and `-` names the position after the last element, which never resolves to a value.
///
/// ```swift
/// let pointer = try JSONPointer("/servers/0/host")
/// pointer.tokens                                  // ["servers", "0", "host"]
/// pointer.resolve(in: document)                   // .string("db1"), or nil when missing
/// JSONPointer(tokens: ["a/b", "m~n"]).description // "/a~1b/m~0n"
/// ```
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
    /// The reference tokens, unescaped; empty for the whole document.
    public var tokens: [String]

    /// Reads the text form of a pointer.
    ///
    /// - Parameter text: `""`, or `/`-separated tokens with `~0` and `~1` escapes.
    /// - Throws: ``JSONPointerError`` when the text does not start with `/` or holds a `~` that is
    ///   not followed by `0` or `1`, naming the position (in Unicode scalars, counting from 1).
    public init(_ text: String) throws(JSONPointerError) {
        let bytes = Array(text.utf8)
        guard let first = bytes.first else {
            tokens = []
            return
        }
        guard first == UInt8(ascii: "/") else {
            throw JSONPointerError(pointer: text, message: "must be empty or start with \"/\" (found \(Self.quoted(prefixScalar: text)) at position 1)")
        }
        var tokens: [String] = []
        var token: [UInt8] = []
        var i = 1
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: "/"):
                tokens.append(String(decoding: token, as: UTF8.self))
                token.removeAll(keepingCapacity: true)
            case UInt8(ascii: "~"):
                guard i + 1 < bytes.count else {
                    let position = Self.scalarPosition(ofByte: i, in: bytes)
                    throw JSONPointerError(pointer: text, message: "\"~\" at position \(position) ends the pointer; \"~\" must be followed by \"0\" (for \"~\") or \"1\" (for \"/\")")
                }
                switch bytes[i + 1] {
                case UInt8(ascii: "0"): token.append(UInt8(ascii: "~"))
                case UInt8(ascii: "1"): token.append(UInt8(ascii: "/"))
                default:
                    let next = String(decoding: bytes[(i + 1)...], as: UTF8.self).unicodeScalars.first.map { String($0) } ?? ""
                    let escape = JSONSerializer.brief(.string("~" + next))
                    let position = Self.scalarPosition(ofByte: i, in: bytes)
                    throw JSONPointerError(pointer: text, message: "\(escape) at position \(position) is not an escape; \"~\" must be followed by \"0\" (for \"~\") or \"1\" (for \"/\")")
                }
                i += 1
            default:
                token.append(byte)
            }
            i += 1
        }
        tokens.append(String(decoding: token, as: UTF8.self))
        self.tokens = tokens
    }

    /// A pointer from unescaped tokens (`["a/b"]` is written `/a~1b`).
    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// The whole document: `""`.
    public static var root: JSONPointer { JSONPointer(tokens: []) }

    /// True for `""`, the whole document.
    public var isRoot: Bool { tokens.isEmpty }

    /// The pointer to the value holding this one, or nil for the root.
    public var parent: JSONPointer? {
        tokens.isEmpty ? nil : JSONPointer(tokens: Array(tokens.dropLast()))
    }

    /// The text form, with `~` written `~0` and `/` written `~1`.
    public var description: String {
        var text = ""
        for token in tokens {
            text.append("/")
            for scalar in token.unicodeScalars {
                switch scalar {
                case "~": text.append("~0")
                case "/": text.append("~1")
                default: text.unicodeScalars.append(scalar)
                }
            }
        }
        return text
    }

    /// This pointer with one more token at the end.
    public func appending(_ token: String) -> JSONPointer {
        JSONPointer(tokens: tokens + [token])
    }

    /// True when `other` names a value strictly inside the one this pointer names
    /// (`/a` is an ancestor of `/a/b`, not of `/a` nor of `/ab`).
    public func isAncestor(of other: JSONPointer) -> Bool {
        guard tokens.count < other.tokens.count else { return false }
        for i in tokens.indices where !tokens[i].isExactly(other.tokens[i]) { return false }
        return true
    }

    /// The value the pointer names, or nil when a member or index is missing.
    ///
    /// Array tokens must be `0` or digits without leading zeros; `-` never resolves. Walks without
    /// recursion, so a pointer of any length is safe.
    public func resolve(in document: JSONValue) -> JSONValue? {
        var current = document
        for token in tokens {
            switch current {
            case .object(let object):
                guard let member = object[token] else { return nil }
                current = member
            case .array(let items):
                guard case .index(let index) = Self.arrayToken(token), index < items.count else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    // Tokens compare scalar by scalar, as object keys do: "é" and "e\u{301}" name different members.
    public static func == (lhs: JSONPointer, rhs: JSONPointer) -> Bool {
        lhs.tokens.count == rhs.tokens.count && zip(lhs.tokens, rhs.tokens).allSatisfy { $0.isExactly($1) }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(tokens.count)
        for token in tokens { hasher.combine(ExactKey(token)) }
    }

    /// What a reference token means against an array.
    enum ArrayToken: Equatable {
        /// An index, not yet checked against the array's length.
        case index(Int)
        /// `-`: the position after the last element.
        case end
        /// Digits that do not fit in an `Int`: past the end of any array.
        case tooLarge
        /// Not an array index; the reason says why.
        case invalid(String)
    }

    /// Reads a token as an array index: `0`, or digits with no leading zero (RFC 6901 §4), or `-`.
    static func arrayToken(_ token: String) -> ArrayToken {
        if token == "-" { return .end }
        let digits = token.utf8
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return .invalid("\(JSONSerializer.brief(.string(token))) is not an array index (digits, or \"-\" for the end)")
        }
        if digits.count > 1, digits.first == UInt8(ascii: "0") {
            return .invalid("\(JSONSerializer.brief(.string(token))) is not an array index (leading zeros are not allowed)")
        }
        var value = 0
        for digit in digits {
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
            if overflow || overflow2 { return .tooLarge }
            value = sum
        }
        return .index(value)
    }

    /// The 1-based position, in Unicode scalars, of the scalar starting at byte `offset`.
    private static func scalarPosition(ofByte offset: Int, in bytes: [UInt8]) -> Int {
        bytes[..<offset].reduce(1) { count, byte in byte & 0xC0 == 0x80 ? count : count + 1 }
    }

    /// The first scalar of `text`, as a JSON string (`"a"`).
    private static func quoted(prefixScalar text: String) -> String {
        JSONSerializer.brief(.string(text.unicodeScalars.first.map { String($0) } ?? ""))
    }
}

/// A JSON Pointer's text could not be read.
public struct JSONPointerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text that was given.
    public let pointer: String
    /// What is wrong and where, e.g. `"~2" at position 4 is not an escape; …`.
    public let message: String

    /// An error about `pointer`.
    public init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }

    /// `JSON pointer "a/b": must be empty or start with "/" (found "a" at position 1)`.
    public var description: String { "JSON pointer \(JSONSerializer.brief(.string(pointer))): \(message)" }
}
