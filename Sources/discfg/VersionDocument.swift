import Foundation

/// `discfg version -f json`: the envelope's `action` and `message`, and the build's fields,
/// each always present (null when a development build has none) so a script can read them
/// without guessing whether a key was left out.
struct VersionDocument: Encodable {
    var version = BuildInfo.version
    var commit = BuildInfo.commit
    var built = BuildInfo.built

    enum CodingKeys: String, CodingKey {
        case action, version, commit, built, message
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("version", forKey: .action)
        try container.encode(version, forKey: .version)
        try container.encode(commit, forKey: .commit)
        try container.encode(built, forKey: .built)
        try container.encode(BuildInfo.line(version: version, commit: commit, built: built), forKey: .message)
    }
}

extension VersionDocument {
    /// The document as `-f json` prints it: pretty, keys sorted as the envelope's are,
    /// ending in a newline.
    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }
}
