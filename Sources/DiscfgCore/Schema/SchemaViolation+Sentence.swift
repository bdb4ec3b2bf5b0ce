import Foundation
import DiscfgJSON

extension SchemaViolation {
    /// Where the value breaks its schema, in the value the schema covers: for a schema on
    /// a prefix, the failing member's pointer in the prefix's document (`/db/port` for
    /// `/app/db`'s `/port` under `/app/`); for one on a key, the pointer in its value.
    /// Empty for the whole value.
    public var location: String {
        guard let schema, schema.hasSuffix("/"), key.hasPrefix(schema), key != schema else { return pointer }
        let segments = key.dropFirst(schema.count).split(separator: "/").map { JSONPointer(tokens: [String($0)]).description }
        return segments.joined() + pointer
    }

    /// The violation as the end of a sentence that names its schema already:
    /// `/db/port must be ≤ 65535`, `the value must be integer, not string`, `"name" is
    /// required`; without a schema, as ``description`` says it.
    var stated: String {
        guard schema != nil else { return description }
        let place = location
        if message.hasPrefix("must") { return "\(place.isEmpty ? (schema?.hasSuffix("/") == true ? "the document" : "the value") : place) \(message)" }
        return place.isEmpty ? message : "\(place): \(message)"
    }

    /// A schema's refusal as one sentence, naming each schema, where its value breaks it and
    /// why: `refused by the schema on /app/: /db/port must be ≤ 65535; nothing changed`.
    /// Up to three violations are named, then how many more there are.
    public static func refusal(_ violations: [SchemaViolation]) -> String {
        let named = violations.filter { !$0.key.isEmpty }
        // The entry with no key counts the violations outside a caller's scopes.
        let outside = violations.first { $0.key.isEmpty }?.message
        var groups: [(schema: String?, places: [String])] = []
        for violation in named.prefix(3) {
            if let last = groups.indices.last, groups[last].schema == violation.schema, violation.schema != nil {
                groups[last].places.append(violation.stated)
            } else {
                groups.append((violation.schema, [violation.stated]))
            }
        }
        var sentence = groups.map { group in
            (group.schema.map { "by the schema on \($0): " } ?? "") + group.places.joined(separator: ", ")
        }.joined(separator: ", and ")
        sentence = groups.isEmpty ? "refused by a schema" : (groups[0].schema == nil ? "refused: " : "refused ") + sentence
        if named.count > 3 { sentence += " (and \(named.count - 3) more)" }
        if let outside { sentence += (named.isEmpty ? ": " : "; and ") + outside }
        return sentence + "; nothing changed"
    }
}
