import DiscfgCore
import DiscfgJSON
import Foundation

/// Where `set` and `import` read their bytes from.
enum ValueInput {
    /// Reads a whole file, or standard input for `-`, refusing more than `limit` bytes
    /// (so `/dev/zero` or a runaway pipe is an error, not a hang).
    static func readFile(_ path: String, field: String, limit: Int) throws -> Data {
        if path == "-" { return try readStandardInput(limit: limit, field: field) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw DiscfgError.invalid(field, "cannot read \(path): no such file")
        }
        guard !isDirectory.boolValue else {
            throw DiscfgError.invalid(field, "cannot read \(path): it is a directory")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw DiscfgError.invalid(field, "cannot read \(path): permission denied or unreadable")
        }
        defer { try? handle.close() }
        // A regular file says its size up front; devices and pipes are read up to the limit.
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
           attributes[.type] as? FileAttributeType == .typeRegular,
           let size = (attributes[.size] as? NSNumber)?.intValue, size > limit {
            throw DiscfgError(.tooLarge, "\(path) is \(size) bytes; the limit is \(limit) bytes", field: field)
        }
        return try read(handle, limit: limit, field: field, name: path)
    }

    /// Reads until the end, or throws `tooLarge` past `limit` bytes.
    private static func read(_ handle: FileHandle, limit: Int, field: String, name: String) throws -> Data {
        var data = Data()
        while true {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: 64 * 1024) ?? Data()
            } catch {
                throw DiscfgError.invalid(field, "cannot read \(name): \((error as NSError).localizedDescription)")
            }
            if chunk.isEmpty { return data }
            guard data.count + chunk.count <= limit else {
                throw DiscfgError(.tooLarge, "\(name) is larger than the limit of \(limit) bytes", field: field)
            }
            data.append(chunk)
        }
    }

    /// Whether standard input is a pipe or a file (not a terminal or /dev/null), so a
    /// value may be read from it.
    static var standardInputHasData: Bool {
        var status = stat()
        guard fstat(STDIN_FILENO, &status) == 0 else { return false }
        let type = status.st_mode & S_IFMT
        return type == S_IFIFO || type == S_IFREG || type == S_IFSOCK
    }

    static var standardInputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    static func readStandardInput(limit: Int, field: String) throws -> Data {
        try read(FileHandle.standardInput, limit: limit, field: field, name: "standard input")
    }
}

/// Asks before something that cannot be undone.
enum Confirmation {
    /// Returns when confirmed by `--yes` or by typing `y` at a terminal; otherwise
    /// throws, changing nothing.
    static func require(_ question: String, yes: Bool) throws {
        if yes { return }
        guard ValueInput.standardInputIsTerminal else {
            throw usage("refusing to \(question) without confirmation; pass --yes", field: "--yes")
        }
        FileHandle.standardError.write(Data("\(question)? [y/N] ".utf8))
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard answer == "y" || answer == "yes" else {
            throw DiscfgError(.invalidArgument, "aborted; nothing was changed", field: "--yes")
        }
    }
}

/// Parses a TTL: seconds (`300`) or a number with a unit (`30s`, `5m`, `2h`, `7d`).
enum TTLParser {
    static func seconds(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        var multiplier: Int64 = 1
        if let last = digits.last, let unit = units[last] {
            multiplier = unit
            digits = digits.dropLast()
        }
        guard let number = try? NumberField.ttl.parse(digits) else {
            throw usage("ttl \"\(text)\" is not a duration from 1 second to 10 years such as 300, 30s, 5m, 2h or 7d", field: "--ttl")
        }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw usage("ttl \"\(text)\" is too long", field: "--ttl") }
        try Limits.validateTTL(seconds: seconds)
        return seconds
    }
}

/// Secrets given as command-line arguments. Any user of the machine can read a
/// process's arguments while it runs (`ps`, `/proc/PID/cmdline`), so each is accepted
/// with one warning that names the safer ways; `--help` names them too.
enum ArgumentSecrets {
    /// Warns that `what` was given on the command line; `instead` says what to use.
    static func warn(_ what: String, instead: String, output: Output) {
        output.warn("\(what) on the command line can be read by any user of this machine while discfg runs (ps, /proc/PID/cmdline); \(instead)")
    }

    /// The warnings for the options every command takes: `--token` and `--secret-key`.
    static func warnGlobal(_ options: GlobalOptions, output: Output) {
        if options.token != nil {
            warn("--token", instead: "set DISCFG_TOKEN in the environment instead", output: output)
        }
        if options.aws.secretKey != nil {
            warn("--secret-key", instead: "use AWS_SECRET_ACCESS_KEY, a profile (--cred-profile) or an instance role instead", output: output)
        }
    }
}

/// A content type as given on the command line: a media type such as
/// `application/json`, or one of the short names `json`, `yaml`, `text` and `binary`.
enum MediaTypeArgument {
    /// The short names and the media types they stand for, in the order messages list them.
    static let shortNames: KeyValuePairs<String, String> = [
        "json": "application/json", "yaml": "application/yaml", "text": "text/plain", "binary": "application/octet-stream",
    ]

    /// The media type `text` names: a short name's media type, or `text` itself when it
    /// is a media type (`type/subtype`, optionally with parameters).
    static func resolve(_ text: String, field: String = "--content-type") throws -> String {
        let lowered = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let media = shortNames.first(where: { $0.key == lowered })?.value { return media }
        guard text.contains("/") else {
            let names = shortNames.map(\.key).joined(separator: ", ")
            throw usage("content type \"\(text.debugEscaped)\" is neither a media type such as application/json nor one of the short names \(names)", field: field)
        }
        do {
            try Limits.validateContentType(text)
        } catch let error as DiscfgError {
            throw usage(error.message, field: field)
        }
        return text
    }

    /// The media type a file's extension implies for `set -d FILE`: `.json` is JSON,
    /// `.yaml` and `.yml` YAML; anything else implies nothing.
    static func implied(byFile path: String) -> String? {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "json": "application/json"
        case "yaml", "yml": "application/yaml"
        default: nil
        }
    }

    /// A note for a value given with no content type that looks like JSON (its first
    /// byte after white space is `{` or `[`) but does not parse, or nil. Such a value
    /// is stored as text, as any untyped value is; the note says so and how to refuse it.
    static func brokenJSONNote(_ value: Data) -> String? {
        guard let first = value.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else {
            return nil
        }
        do {
            _ = try JSONParser.parse(Array(value))
            return nil
        } catch {
            return "stored as text: it is not valid JSON (\(error.message) at byte \(error.offset), line \(error.line), column \(error.column)); pass --content-type json to refuse it instead"
        }
    }
}
