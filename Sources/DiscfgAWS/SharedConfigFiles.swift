import Foundation

/// The AWS shared `credentials` and `config` files, parsed into profiles.
///
/// discfg reads them the way the AWS CLI does so an operator's existing setup just works:
/// `[NAME]` sections in the credentials file, `[profile NAME]` (or `[default]`) in the config
/// file, and credentials-file values winning over config-file values for the same key.
public struct SharedConfigFiles: Sendable {
    /// Path of the credentials file that was (or would have been) read.
    public let credentialsPath: String
    /// Path of the config file that was (or would have been) read.
    public let configPath: String
    /// Key-value pairs per profile name from the credentials file.
    public let credentialsProfiles: [String: [String: String]]
    /// Key-value pairs per profile name from the config file (the `profile ` prefix removed).
    public let configProfiles: [String: [String: String]]

    /// Loads both files; a missing file counts as empty.
    ///
    /// `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE` override the default paths under
    /// `~/.aws`, and `~` expands with the `HOME` of `environment`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"].flatMap(\.nonEmpty) ?? NSHomeDirectory()
        func expand(_ path: String) -> String {
            if path == "~" { return home }
            if path.hasPrefix("~/") { return home + path.dropFirst(1) }
            return path
        }
        credentialsPath = expand(environment["AWS_SHARED_CREDENTIALS_FILE"].flatMap(\.nonEmpty) ?? "~/.aws/credentials")
        configPath = expand(environment["AWS_CONFIG_FILE"].flatMap(\.nonEmpty) ?? "~/.aws/config")
        credentialsProfiles = Self.load(credentialsPath)
        var config: [String: [String: String]] = [:]
        for (section, values) in Self.load(configPath) {
            let name: String
            if section.hasPrefix("profile ") {
                name = section.dropFirst("profile ".count).trimmingCharacters(in: .whitespaces)
            } else if section == "default" {
                name = section
            } else {
                continue // sso-session, services and other non-profile sections
            }
            // `[profile default]` and `[default]` both exist in the wild; merge them.
            config[name, default: [:]].merge(values) { _, new in new }
        }
        configProfiles = config
    }

    /// The profile to use: `AWS_PROFILE`, else `default`.
    public static func profileName(environment: [String: String]) -> String {
        environment["AWS_PROFILE"].flatMap(\.nonEmpty) ?? "default"
    }

    /// All settings of `profile`, credentials-file values taking precedence; nil if neither file has it.
    public func profile(_ name: String) -> [String: String]? {
        let fromConfig = configProfiles[name]
        let fromCredentials = credentialsProfiles[name]
        if fromConfig == nil && fromCredentials == nil { return nil }
        return (fromConfig ?? [:]).merging(fromCredentials ?? [:]) { _, credentialsValue in credentialsValue }
    }

    /// Parses an INI file into sections; unreadable files yield no sections.
    static func load(_ path: String) -> [String: [String: String]] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        return parse(String(decoding: data, as: UTF8.self))
    }

    /// Parses AWS-flavoured INI: `[section]`, `key = value`, `#`/`;` comments, indented sub-keys ignored.
    static func parse(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard let close = line.firstIndex(of: "]") else { current = nil; continue }
                let name = line[line.index(after: line.startIndex)..<close].trimmingCharacters(in: .whitespaces)
                current = name
                if sections[name] == nil { sections[name] = [:] }
                continue
            }
            // Indented lines are nested settings (e.g. `s3 =` blocks) that discfg does not use.
            if let first = rawLine.first, first == " " || first == "\t" { continue }
            guard let section = current, let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
            var value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            // Inline comments need whitespace before the marker, so values like `abc#def` survive.
            for marker in [" #", "\t#", " ;", "\t;"] {
                if let range = value.range(of: marker) {
                    value = value[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
                }
            }
            sections[section, default: [:]][key] = value
        }
        return sections
    }
}
