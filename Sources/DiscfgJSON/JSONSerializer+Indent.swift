extension JSONSerializer {
    /// How indented JSON is laid out.
    public enum Layout: Sendable {
        /// Two spaces a level, `"key": value`, `{}` and `[]` kept on their line.
        case plain
        /// As Foundation's `JSONEncoder` with `.prettyPrinted` writes it: two spaces a level,
        /// `"key" : value`, and an empty object or array as its brackets around a blank line.
        case foundation
    }

    /// Compact JSON text laid out on lines, each member and element on its own. Only
    /// whitespace is added, so numbers and strings stay exactly as they were written.
    public static func indented(_ compact: some Collection<UInt8>, layout: Layout = .plain) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(compact.count * 2)
        var depth = 0
        var inString = false
        var escaped = false
        func newline() {
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
        }
        var index = compact.startIndex
        while index < compact.endIndex {
            let byte = compact[index]
            index = compact.index(after: index)
            if inString {
                out.append(byte)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                out.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                out.append(byte)
                // `}` and `]` are each two code points after their opening bracket.
                if index < compact.endIndex, compact[index] == byte + 2 {
                    if case .foundation = layout {
                        out.append(UInt8(ascii: "\n"))
                        newline()
                    }
                    out.append(compact[index])
                    index = compact.index(after: index)
                } else {
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline()
                out.append(byte)
            case UInt8(ascii: ","):
                out.append(byte)
                newline()
            case UInt8(ascii: ":"):
                if case .foundation = layout { out.append(UInt8(ascii: " ")) }
                out.append(contentsOf: [byte, UInt8(ascii: " ")])
            default:
                out.append(byte)
            }
        }
        return out
    }
}
