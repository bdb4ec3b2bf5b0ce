/// Why a document is not JSON, and where: `line 3, column 14: expected ',' or '}'`.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line of the offending byte.
    public let line: Int
    /// 1-based column, counted in characters (Unicode scalars) from the start of the line.
    public let column: Int
    /// 0-based byte offset.
    public let offset: Int
    /// What was wrong, e.g. `expected ',' or '}'`.
    public let message: String

    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A strict RFC 8259 parser from bytes to ``JSONValue``, bounded in depth and size.
///
/// - Nesting deeper than ``Options/maxDepth`` and input larger than ``Options/maxBytes`` are errors,
///   so hostile documents cannot overflow the stack or exhaust memory.
/// - A leading UTF-8 byte order mark is skipped; any other BOM or invalid UTF-8 is an error.
/// - Escaped lone surrogates (`"\uD800"`) are errors: a Swift `String` cannot hold them.
/// - Duplicate keys are rejected unless ``Options/duplicateKeys`` says `.lastWins`.
///
/// ```swift
/// let value = try JSONParser.parse(Array(text.utf8))
/// ```
public struct JSONParser {
    /// What to do with `{"a": 1, "a": 2}`.
    public enum DuplicateKeyPolicy: Sendable {
        /// The document is an error naming the key (the default: configs should say things once).
        case reject
        /// The later value replaces the earlier one, in the earlier one's place.
        case lastWins
    }

    /// Limits and policies of one parse.
    public struct Options: Sendable {
        /// Deepest nesting of arrays and objects accepted (default 512).
        public var maxDepth: Int
        /// Largest input accepted, in bytes (default 64 MiB).
        public var maxBytes: Int
        /// Duplicate key handling (default `.reject`).
        public var duplicateKeys: DuplicateKeyPolicy

        /// Options with the defaults above.
        public init(maxDepth: Int = 512, maxBytes: Int = 64 << 20, duplicateKeys: DuplicateKeyPolicy = .reject) {
            self.maxDepth = maxDepth
            self.maxBytes = maxBytes
            self.duplicateKeys = duplicateKeys
        }
    }

    /// Parses one JSON value (with optional surrounding whitespace) from `bytes`.
    /// - Throws: ``JSONParseError`` with the line and column of the first problem.
    public static func parse(_ bytes: [UInt8], options: Options = Options()) throws(JSONParseError) -> JSONValue {
        if bytes.count > options.maxBytes {
            throw JSONParseError(line: 1, column: 1, offset: 0, message: "document is \(bytes.count) bytes, more than the limit of \(options.maxBytes)")
        }
        var parser = JSONParser(bytes: bytes, options: options)
        return try parser.parseDocument()
    }

    /// Parses one JSON value from a string.
    public static func parse(_ text: String, options: Options = Options()) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), options: options)
    }

    private let bytes: [UInt8]
    private let options: Options
    private var position = 0
    private var depth = 0

    private init(bytes: [UInt8], options: Options) {
        self.bytes = bytes
        self.options = options
    }

    private mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        skipWhitespace()
        guard position < bytes.count else { throw error("expected a JSON value, found the end of the document") }
        let value = try parseValue()
        skipWhitespace()
        if position < bytes.count { throw error("unexpected \(describe(bytes[position])) after the JSON value") }
        return value
    }

    private func error(_ message: String, at offset: Int? = nil) -> JSONParseError {
        let offset = min(offset ?? position, bytes.count)
        var line = 1
        var lineStart = 0
        for i in 0..<offset where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        // Columns count characters, so a line with "é" before the error is not off by one;
        // continuation bytes (10xxxxxx) do not start a character.
        var column = 1
        for i in lineStart..<offset where bytes[i] & 0xC0 != 0x80 { column += 1 }
        return JSONParseError(line: line, column: column, offset: offset, message: message)
    }

    private func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0: return "NUL byte"
        case 0x20...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        default: return "byte 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }

    private var found: String {
        position < bytes.count ? describe(bytes[position]) : "the end of the document"
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard position < bytes.count else { throw error("expected a JSON value, found the end of the document") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: throw error("expected a JSON value, found \(found)")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let start = position
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for byte in expected {
            guard position < bytes.count, bytes[position] == byte else { throw error("expected '\(word)'", at: start) }
            position += 1
        }
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > options.maxDepth { throw error("nesting deeper than the limit of \(options.maxDepth)") }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enter()
        position += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            guard position < bytes.count else { throw error("expected ',' or ']', found the end of the document") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                skipWhitespace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") { throw error("trailing comma before ']'") }
                continue
            }
            if bytes[position] == UInt8(ascii: "]") { break }
            throw error("expected ',' or ']', found \(found)")
        }
        position += 1
        depth -= 1
        return .array(items)
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enter()
        position += 1
        var object = JSONObject()
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a string key, found \(found)")
            }
            let keyStart = position
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw error("expected ':' after the key, found \(found)") }
            position += 1
            skipWhitespace()
            let value = try parseValue()
            if object.updateValue(value, forKey: key) != nil, options.duplicateKeys == .reject {
                throw error("duplicate key \"\(key)\"", at: keyStart)
            }
            skipWhitespace()
            guard position < bytes.count else { throw error("expected ',' or '}', found the end of the document") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                skipWhitespace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") { throw error("trailing comma before '}'") }
                continue
            }
            if bytes[position] == UInt8(ascii: "}") { break }
            throw error("expected ',' or '}', found \(found)")
        }
        position += 1
        depth -= 1
        return .object(object)
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = position
        var negative = false
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        var digits: [UInt8] = []
        var exponent = 0
        guard position < bytes.count, isDigit(bytes[position]) else { throw error("expected a digit after '-'", at: position) }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw error("leading zeros are not allowed in numbers", at: start) }
        } else {
            while position < bytes.count, isDigit(bytes[position]) {
                digits.append(bytes[position])
                position += 1
            }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw error("expected a digit after '.'") }
            while position < bytes.count, isDigit(bytes[position]) {
                digits.append(bytes[position])
                exponent -= 1
                position += 1
            }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            var exponentNegative = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                exponentNegative = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw error("expected a digit in the exponent") }
            var written = 0
            while position < bytes.count, isDigit(bytes[position]) {
                // Saturate: past the bound the value is beyond anything a document can compare with.
                if written < JSONNumber.exponentBound { written = written * 10 + Int(bytes[position] - UInt8(ascii: "0")) }
                position += 1
            }
            exponent += exponentNegative ? -written : written
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        return JSONNumber(isNegative: negative, digits: digits, exponent: exponent, text: text)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws(JSONParseError) -> String {
        let open = position
        position += 1
        var buffer: [UInt8] = []
        var runStart = position
        // The bytes of the string so far OR'ed: below 0x80, it is ASCII, valid as it is.
        var highBits: UInt8 = 0
        var escaped = false
        while true {
            guard position < bytes.count else { throw error("unterminated string", at: open) }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                // The common string: ASCII without escapes, made straight from the input.
                if !escaped, highBits < 0x80 {
                    let string = bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[runStart..<position]), as: UTF8.self) }
                    position += 1
                    return string
                }
                buffer.append(contentsOf: bytes[runStart..<position])
                position += 1
                break
            }
            highBits |= byte
            if byte < 0x20 {
                throw error(byte == 0 ? "NUL byte in a string (write \\u0000)" : "control character 0x\(String(byte, radix: 16)) in a string must be escaped")
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                buffer.append(contentsOf: bytes[runStart..<position])
                try parseEscape(into: &buffer)
                runStart = position
                continue
            }
            position += 1
        }
        guard let string = String(validating: buffer, as: UTF8.self) else {
            throw error("string is not valid UTF-8", at: open)
        }
        return string
    }

    private mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONParseError) {
        let start = position
        position += 1
        guard position < bytes.count else { throw error("unterminated string") }
        let byte = bytes[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""): buffer.append(0x22)
        case UInt8(ascii: "\\"): buffer.append(0x5C)
        case UInt8(ascii: "/"): buffer.append(0x2F)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var code = try hex4()
            if (0xD800...0xDBFF).contains(code) {
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                    throw error("lone high surrogate \\u\(String(code, radix: 16, uppercase: true)) (not followed by a low surrogate)", at: start)
                }
                position += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error("high surrogate \\u\(String(code, radix: 16, uppercase: true)) followed by \\u\(String(low, radix: 16, uppercase: true)), not a low surrogate", at: start)
                }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(code) {
                throw error("lone low surrogate \\u\(String(code, radix: 16, uppercase: true))", at: start)
            }
            let scalar = Unicode.Scalar(code)!
            buffer.append(contentsOf: UTF8.encode(scalar)!)
        default:
            throw error("invalid escape '\\\(Character(Unicode.Scalar(byte)))'", at: start)
        }
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard position < bytes.count else { throw error("expected 4 hex digits after \\u") }
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("expected 4 hex digits after \\u, found \(describe(byte))")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }
}
