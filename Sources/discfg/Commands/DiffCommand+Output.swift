import DiscfgCore
import DiscfgJSON
import Foundation

/// What `discfg diff` found, printed as lines for people or as one JSON document.
struct DiffReport {
    /// One side as read.
    struct Side {
        /// The argument that named it.
        var name: String
        /// The config, for a config side.
        var config: ConfigName?
        /// The revision it was read at (a snapshot file's, when it says).
        var revision: Revision?
        /// The path, for a file side.
        var file: String?
        /// The file's format, for a file side.
        var format: SnapshotFormat?
        /// Its keys under the prefix.
        var entries: [ConfigSnapshot.Entry]
    }

    var old: Side
    var new: Side
    /// The prefix both sides were limited to, when given.
    var prefix: KeyPrefix?
    var differences: [KeyDifference]

    func print(to output: Output) {
        switch output.format {
        case .json: output.raw(Data(((try? PrettyJSON.text(document)) ?? "{}").utf8) + Data("\n".utf8))
        case .human:
            // The same sides print nothing, as diff prints nothing.
            guard !differences.isEmpty else { return }
            output.raw(Data((lines.joined(separator: "\n") + "\n").utf8))
        default: break
        }
    }

    /// `--- A`, `+++ B`, then a line per key and one per changed member beneath it.
    var lines: [String] {
        var lines = ["--- \(Self.title(old))", "+++ \(Self.title(new))"]
        for difference in differences {
            let key = difference.key.path
            switch difference.kind {
            case .added, .removed:
                let sign = difference.kind == .added ? "+" : "-"
                let entry = difference.old ?? difference.new
                lines.append(difference.isSecret ? "\(sign) \(key) (secret)" : "\(sign) \(key) = \(entry.map { Self.preview($0.value) } ?? "")")
            case .changed:
                if difference.isSecret {
                    lines.append("~ \(key): changed (secret)")
                    continue
                }
                if let members = difference.members {
                    lines.append("~ \(key)")
                    lines += members.map { "    \($0)" }
                } else {
                    lines.append("~ \(key): \(difference.old.map { Self.preview($0.value) } ?? "") → \(difference.new.map { Self.preview($0.value) } ?? "")")
                }
                if difference.contentTypeChanged {
                    lines.append("    content type: \(difference.old?.contentType ?? "") → \(difference.new?.contentType ?? "")")
                }
            }
        }
        return lines
    }

    private static func title(_ side: Side) -> String {
        guard side.config != nil, let revision = side.revision else { return side.name }
        return "\(side.name) (revision \(revision))"
    }

    /// A value on one line: text as a JSON string cut at 60 characters, binary as its size.
    private static func preview(_ value: Data) -> String {
        guard let text = String(validating: value, as: UTF8.self) else { return "<\(value.count) bytes of binary data>" }
        return JSONSerializer.brief(.string(text))
    }

    /// `{action, equal, a, b, prefix?, changes: [{key, change, secret?, from?, to?, members?}]}`.
    var document: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("action", .string("diff")),
            ("equal", .bool(differences.isEmpty)),
            ("a", Self.describe(old)),
            ("b", Self.describe(new)),
        ]
        if let prefix { members.append(("prefix", .string(prefix.path))) }
        members.append(("changes", .array(differences.map(Self.describe))))
        return .object(JSONObject(members))
    }

    private static func describe(_ side: Side) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("name", .string(side.name))]
        if let config = side.config { members.append(("config", .string(config.rawValue))) }
        if let file = side.file { members.append(("file", .string(file))) }
        if let format = side.format { members.append(("format", .string(format.rawValue))) }
        if let revision = side.revision, let number = JSONNumber(String(revision.rawValue)) { members.append(("revision", .number(number))) }
        return .object(JSONObject(members))
    }

    private static func describe(_ difference: KeyDifference) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("key", .string(difference.key.path)), ("change", .string(difference.kind.rawValue))]
        if difference.isSecret {
            members.append(("secret", .bool(true)))
            return .object(JSONObject(members))
        }
        for (name, entry) in [("from", difference.old), ("to", difference.new)] {
            guard let entry else { continue }
            let (text, encoding) = ValueEncoding.encode(entry.value)
            members.append((name, .string(text)))
            if let encoding { members.append(("\(name)Encoding", .string(encoding))) }
            if let contentType = entry.contentType { members.append(("\(name)ContentType", .string(contentType))) }
        }
        if let changes = difference.members {
            members.append(("members", .array(changes.map { change in
                var fields: [(key: String, value: JSONValue)] = [("pointer", .string(change.pointer.description)), ("change", .string(change.kind.rawValue))]
                if let old = change.old { fields.append(("from", old)) }
                if let new = change.new { fields.append(("to", new)) }
                return .object(JSONObject(fields))
            })))
        }
        return .object(JSONObject(members))
    }
}
