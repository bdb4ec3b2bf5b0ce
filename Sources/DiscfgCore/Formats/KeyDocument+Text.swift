import Foundation
import DiscfgJSON

extension KeyDocument {
    /// The document of `items` (live items under `prefix`, in any order) as compact JSON text,
    /// the same text as ``read(_:under:parsed:)`` serialized, written member by member.
    ///
    /// The whole document is never held as a ``JSONValue``: a parsed value takes some 50 times
    /// its text (a read of a 15 MiB document of small numbers took about 500 MiB), so each JSON
    /// value is parsed, written and let go before the next, and the text is counted as it grows.
    /// - Parameters:
    ///   - maxBytes: the most bytes the text may take.
    ///   - tooLarge: the error thrown once the text would pass `maxBytes`.
    /// - Throws: `notRepresentable` naming a key that is also a directory; `tooLarge`.
    public static func text(_ items: [Item], under prefix: KeyPrefix, maxBytes: Int, tooLarge: DiscfgError) throws -> [UInt8] {
        let members = items.compactMap { item -> (segments: [Substring], item: Item)? in
            guard prefix.contains(item.key), !SchemaTarget.isReserved(item.key) else { return nil }
            return (item.key.path.utf8.dropFirst(prefix.path.utf8.count).split(separator: UInt8(ascii: "/")).map { Substring($0) }, item)
        }.sorted { $0.segments.lexicographicallyPrecedes($1.segments) { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        var writer = TextWriter(maxBytes: maxBytes, tooLarge: tooLarge)
        var previous: (segments: [Substring], item: Item)?
        for member in members {
            guard let name = member.segments.last else { throw clash(member.item.key.path, prefix) }
            if let previous, previous.segments.count < member.segments.count, member.segments.starts(with: previous.segments, by: { $0.utf8.elementsEqual($1.utf8) }) {
                throw clash(previous.item.key.path, prefix)
            }
            try writer.enter(member.segments.dropLast())
            try writer.member(name, try serialized(member.item))
            previous = member
        }
        return try writer.finish()
    }

    /// A value as its document member's compact JSON text.
    static func serialized(_ item: Item) throws -> [UInt8] {
        do {
            return try JSONSerializer.serialize(embedded(item))
        } catch {
            throw DiscfgError.invalid("value", "value of \(item.key) is not representable: \(error)")
        }
    }

    /// Writes nested objects member by member, the open ones on a stack.
    private struct TextWriter {
        let maxBytes: Int
        let tooLarge: DiscfgError
        var text: [UInt8] = [UInt8(ascii: "{")]
        /// The names of the objects open below the root, outermost first.
        var open: [Substring] = []
        /// Whether each open object (the root first) has a member yet.
        var hasMembers = [false]

        /// Closes the open objects that are not on `directories` and opens those missing.
        mutating func enter(_ directories: ArraySlice<Substring>) throws {
            var shared = 0
            while shared < open.count, shared < directories.count, open[shared].utf8.elementsEqual(directories[directories.startIndex + shared].utf8) { shared += 1 }
            while open.count > shared {
                open.removeLast()
                hasMembers.removeLast()
                try append([UInt8(ascii: "}")])
            }
            for directory in directories.dropFirst(shared) {
                try name(directory)
                try append([UInt8(ascii: "{")])
                open.append(directory)
                hasMembers.append(false)
            }
        }

        /// Writes a member of the innermost open object.
        mutating func member(_ key: Substring, _ value: [UInt8]) throws {
            try name(key)
            try append(value)
        }

        /// Closes every open object and returns the text.
        mutating func finish() throws -> [UInt8] {
            try append(Array(repeating: UInt8(ascii: "}"), count: open.count + 1))
            return text
        }

        private mutating func name(_ key: Substring) throws {
            var piece: [UInt8] = hasMembers[hasMembers.count - 1] ? [UInt8(ascii: ",")] : []
            hasMembers[hasMembers.count - 1] = true
            piece += try JSONSerializer.serialize(.string(String(key)))
            piece.append(UInt8(ascii: ":"))
            try append(piece)
        }

        private mutating func append(_ bytes: [UInt8]) throws {
            guard text.count + bytes.count <= maxBytes else { throw tooLarge }
            text += bytes
        }
    }
}
