import DiscfgFlags
import DiscfgJSON
import Foundation

/// The kill switch's edit of a flag set: the flag's `state` rewritten in place, every other
/// byte of the document as it was (spacing, member order, numbers as written).
///
/// ```swift
/// let edited = try FlagStateEdit.setting(.disabled, of: "new-ui", in: item.value)
/// ```
public enum FlagStateEdit {
    /// `document` with the `state` of flag `key` set to `state`.
    ///
    /// - Throws: ``DiscfgError`` (`invalidArgument`) when the document is not JSON or has
    ///   no `flags` member with that flag and its `state`.
    public static func setting(_ state: Flag.State, of key: String, in document: Data) throws -> Data {
        let scanner = Scanner(bytes: Array(document))
        guard let flags = try scanner.member("flags", ofObjectAt: scanner.valueStart(0)),
              let flag = try scanner.member(key, ofObjectAt: flags),
              let at = try scanner.member("state", ofObjectAt: flag)
        else {
            throw DiscfgError.invalid("flag", "the flag set has no state for flag \"\(key)\" at /flags/\(key)/state")
        }
        let end = try scanner.end(ofValueAt: at)
        var bytes = scanner.bytes
        bytes.replaceSubrange(at..<end, with: Array("\"\(state.rawValue)\"".utf8))
        return Data(bytes)
    }

    /// Finds members in JSON text already known to parse; any surprise is an error.
    struct Scanner {
        let bytes: [UInt8]

        private func skipSpace(_ i: Int) -> Int {
            var i = i
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
            return i
        }

        private func malformed() -> DiscfgError { DiscfgError.invalid("value", "the flag set is not JSON") }

        /// Where the value starting at or after `i` begins.
        func valueStart(_ i: Int) throws -> Int {
            let i = skipSpace(i)
            guard i < bytes.count else { throw malformed() }
            return i
        }

        /// Where the value beginning at `i` ends (one past its last byte).
        func end(ofValueAt i: Int) throws -> Int {
            guard i < bytes.count else { throw malformed() }
            switch bytes[i] {
            case UInt8(ascii: "\""):
                var j = i + 1
                while j < bytes.count, bytes[j] != UInt8(ascii: "\"") { j += bytes[j] == UInt8(ascii: "\\") ? 2 : 1 }
                guard j < bytes.count else { throw malformed() }
                return j + 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0, j = i
                while j < bytes.count {
                    switch bytes[j] {
                    case UInt8(ascii: "\""): j = try end(ofValueAt: j) - 1
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { return j + 1 }
                    default: break
                    }
                    j += 1
                }
                throw malformed()
            default:
                var j = i
                while j < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[j]) { j += 1 }
                return j
            }
        }

        /// Where the value of member `name` of the object at `i` begins; nil when the value
        /// at `i` is not an object or has no such member (the last, when named twice, as the
        /// parser keeps it).
        func member(_ name: String, ofObjectAt i: Int) throws -> Int? {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return nil }
            var j = skipSpace(i + 1)
            var found: Int?
            while j < bytes.count, bytes[j] != UInt8(ascii: "}") {
                let nameEnd = try end(ofValueAt: j)
                guard case .string(let member)? = try? JSONParser.parse(Array(bytes[j..<nameEnd])) else { throw malformed() }
                j = skipSpace(nameEnd)
                guard j < bytes.count, bytes[j] == UInt8(ascii: ":") else { throw malformed() }
                let value = try valueStart(j + 1)
                if member == name { found = value }
                j = skipSpace(try end(ofValueAt: value))
                if j < bytes.count, bytes[j] == UInt8(ascii: ",") { j = skipSpace(j + 1) }
            }
            return found
        }
    }
}
