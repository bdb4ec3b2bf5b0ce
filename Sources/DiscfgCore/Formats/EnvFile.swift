import Foundation

/// `NAME=value` files, as shells, Docker and dotenv libraries read them.
public enum EnvFile {
    /// Writes one line per key; `/db/host` becomes `DB_HOST`. discfg's own records (the
    /// schemas under `/.discfg/`) are no program's settings and are left out.
    static func encode(_ snapshot: ConfigSnapshot) throws -> String {
        var lines: [String] = []
        var owners: [String: Key] = [:]
        for entry in snapshot.items where !SchemaTarget.isReserved(entry.key) {
            let name = variableName(for: entry.key)
            if let other = owners[name] {
                throw DiscfgError(.notRepresentable, "keys \(other) and \(entry.key) both become \(name) in env format; use --to json or yaml", field: "format")
            }
            owners[name] = entry.key
            guard let text = String(validating: entry.value, as: UTF8.self) else {
                throw DiscfgError(.notRepresentable, "key \(entry.key) holds binary data, which env format cannot carry; use --to json or yaml", field: "format")
            }
            lines.append("\(name)=\(try quoted(text, key: entry.key))")
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// The key an env import gives a variable, the inverse of ``variableName(for:)``:
    /// lower-cased, each run of `_` a `/` (`DB_HOST` is `/db/host`). Keys with `_`,
    /// upper case or other punctuation do not come back as they were (`/db_host` is
    /// written `DB_HOST`, which imports as `/db/host`).
    /// - Throws: `invalidArgument` for a name with no letter or digit, such as `_`.
    public static func key(forVariable name: String) throws -> Key {
        let parts = name.lowercased().split(separator: "_")
        guard !parts.isEmpty else {
            throw DiscfgError.invalid("file", "variable \(name.debugEscaped) names no key: it has no letter or digit")
        }
        return try Key("/" + parts.joined(separator: "/"))
    }

    /// A decoded env file's variables as the keys an import writes (``key(forVariable:)``).
    /// - Throws: `invalidArgument` when two variables name the same key.
    public static func keyed(_ snapshot: ConfigSnapshot) throws -> ConfigSnapshot {
        var keyed = snapshot
        var owners: [Key: String] = [:]
        for index in keyed.items.indices {
            let name = String(keyed.items[index].key.path.dropFirst())
            let key = try key(forVariable: name)
            if let other = owners[key] {
                throw DiscfgError.invalid("file", "variables \(other) and \(name) both become key \(key)")
            }
            owners[key] = name
            keyed.items[index].key = key
        }
        return keyed
    }

    /// The variable name for a key: letters and digits upper-cased, everything else `_`.
    public static func variableName(for key: Key) -> String {
        var name = String(key.path.dropFirst().unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar)) ? Character(String(scalar).uppercased()) : "_"
        })
        if name.first?.isNumber == true { name = "_" + name }
        return name
    }

    /// The value as it stands after `=`: bare when plainly safe, else double-quoted with
    /// `\n`, `\r` and `\t` escaped, so no line break ever reaches the file raw.
    /// Scalar by scalar: as a `Character`, CR LF is one grapheme and would slip past.
    /// - Throws: `invalidArgument` for other control characters and Unicode line
    ///   separators, which env readers split lines on and no escape carries.
    private static func quoted(_ text: String, key: Key) throws -> String {
        let plain = text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_-./:@,+%".unicodeScalars.contains($0)) }
        if plain && !text.isEmpty { return text }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "$": out += "\\$"
            case "`": out += "\\`"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}":
                throw DiscfgError(
                    .notRepresentable,
                    "key \(key) holds the control character U+\(String(scalar.value, radix: 16, uppercase: true)), which env format cannot carry; use --to json or yaml",
                    field: "format"
                )
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Reads `NAME=value` lines: `export` prefixes, `#` comments, blank lines, and
    /// single (literal) or double (escaped) quotes.
    static func decode(_ text: String) throws -> ConfigSnapshot {
        var entries: [ConfigSnapshot.Entry] = []
        // By Character: "\r\n" is one, so CR LF files split as LF files do.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            var line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = String(line.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
            guard let equals = line.firstIndex(of: "=") else {
                throw DiscfgError.invalid("file", "line \(index + 1) is not NAME=value")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }) else {
                throw DiscfgError.invalid("file", "line \(index + 1): \"\(name.debugEscaped)\" is not a variable name")
            }
            let value = try unquote(String(line[line.index(after: equals)...]).trimmingCharacters(in: .whitespaces), line: index + 1)
            entries.append(ConfigSnapshot.Entry(key: try Key(name), value: Data(value.utf8)))
        }
        return ConfigSnapshot(items: entries)
    }

    private static func unquote(_ raw: String, line: Int) throws -> String {
        guard let quote = raw.first, quote == "\"" || quote == "'" else {
            // Unquoted: a trailing ` # comment` is not part of the value.
            if let comment = raw.range(of: " #") { return raw[..<comment.lowerBound].trimmingCharacters(in: .whitespaces) }
            return raw
        }
        guard raw.count >= 2, raw.last == quote else {
            throw DiscfgError.invalid("file", "line \(line): the quoted value is not closed")
        }
        let inner = raw.dropFirst().dropLast()
        if quote == "'" { return String(inner) }
        var out = ""
        var escaping = false
        for character in inner {
            if escaping {
                switch character {
                case "n": out += "\n"
                case "r": out += "\r"
                case "t": out += "\t"
                default: out.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.append(character)
            }
        }
        return out
    }
}
