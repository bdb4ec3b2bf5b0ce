import DiscfgCore
import DiscfgStores
import Foundation

/// A named way to reach a store, as kubectl and etcdctl keep them: the store's URL and,
/// optionally, a config, a token file and TLS files. `discfg context add` saves one,
/// `--context NAME` (or `DISCFG_CONTEXT`, or `context: NAME` in `.discfg`, or the
/// current context) uses it.
///
/// A context names a token file and never holds a token: the file is read each time
/// the context is used.
struct StoreContext: Codable, Equatable, Sendable {
    /// The store URL (a relative SQLite path is saved as an absolute one).
    var store: String
    /// The config commands use when none is named.
    var config: String?
    /// A file holding the bearer token for an http(s) store.
    var tokenFile: String?
    /// CA certificates (PEM) to trust for an https:// store.
    var cacert: String?
    /// A client certificate (PEM) to present, with ``key``.
    var cert: String?
    /// The client certificate's private key (PEM).
    var key: String?
}

/// A context's name: 1 to 64 letters, digits, `.`, `_` or `-`.
struct ContextName: Hashable, Comparable, Sendable, CustomStringConvertible {
    let rawValue: String

    /// - Throws: `invalidArgument` naming the rule.
    init(_ rawValue: String) throws {
        let allowed = rawValue.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
        guard (1...64).contains(rawValue.count), allowed, rawValue != ".", rawValue != ".." else {
            throw DiscfgError.invalid("context", "context name \"\(rawValue.debugEscaped)\" is not 1 to 64 letters, digits, '.', '_' or '-'")
        }
        self.rawValue = rawValue
    }

    var description: String { rawValue }
    static func < (a: ContextName, b: ContextName) -> Bool { a.rawValue < b.rawValue }
}

/// The file that keeps contexts and names the current one:
/// `$DISCFG_CONTEXTS`, else `$XDG_CONFIG_HOME/discfg/contexts.json`
/// (`~/.config/discfg/contexts.json`).
///
/// It names token and key files, so it is treated as ssh treats its own: written
/// atomically with mode 0600 (its folder made 0700), and refused when another user
/// owns it or it is readable or writable by group or others.
struct ContextFile: Codable, Equatable, Sendable {
    /// The context used when none is named.
    var current: String?
    /// The contexts by name.
    var contexts: [String: StoreContext] = [:]

    /// Where the file is, from the environment.
    static func path(environment: [String: String]) -> String {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let path = value("DISCFG_CONTEXTS") { return path }
        let configHome = value("XDG_CONFIG_HOME") ?? ((value("HOME") ?? NSHomeDirectory()) + "/.config")
        return configHome + "/discfg/contexts.json"
    }

    /// The file at `path`, or nil when there is none.
    /// - Throws: `invalidArgument` when it is owned by another user, open to others,
    ///   or not a contexts file.
    static func load(from path: String) throws -> ContextFile? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw DiscfgError(.unavailable, "cannot read the contexts file \(path): \(String(cString: strerror(errno)))", field: "context")
        }
        guard info.st_uid == getuid() else {
            throw DiscfgError.invalid("context", "the contexts file \(path) is owned by another user; it is not used")
        }
        try FilePermissions.requirePrivate(path, mode: info.st_mode, what: "the contexts file")
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DiscfgError(.unavailable, "cannot read the contexts file \(path)", field: "context")
        }
        do {
            return try JSONDecoder().decode(ContextFile.self, from: data)
        } catch {
            throw DiscfgError.invalid("context", "the contexts file \(path) is not a contexts file (JSON with \"contexts\" and \"current\")")
        }
    }

    /// Writes the file at `path` atomically, mode 0600, making its folder (0700).
    func save(to path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            throw DiscfgError(.unavailable, "cannot make the folder \(folder) for the contexts file: \(error.localizedDescription)", field: "context")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(UInt8(ascii: "\n"))
        try FilePermissions.writePrivately(data, to: path)
    }

    /// The context called `name`, or a sentence saying there is none (and, given
    /// `source`, what named it).
    func context(_ name: ContextName, path: String, source: String? = nil) throws -> StoreContext {
        guard let context = contexts[name.rawValue] else {
            let known = contexts.isEmpty ? "there are none ('discfg context add' saves one)" : "'discfg context ls' lists them"
            let named = source.map { " (named by \($0))" } ?? ""
            throw DiscfgError.invalid("context", "no context named \(name)\(named) in \(path); \(known)")
        }
        return context
    }
}

/// Files that must be the user's alone: the contexts file and the token files it names.
enum FilePermissions {
    /// Refuses a file readable or writable by group or others, as ssh refuses a key.
    static func requirePrivate(_ path: String, mode: mode_t, what: String) throws {
        guard mode & 0o077 == 0 else {
            let shown = String(mode & 0o777, radix: 8)
            throw DiscfgError.invalid("context", "\(what) \(path) is open to other users (mode 0\(shown)); run 'chmod 600 \(path)'")
        }
    }

    /// Reads a token file: its first line, which must not be empty; the file must be
    /// the user's alone.
    static func readToken(_ path: String) throws -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw DiscfgError.invalid("context", "the token file \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        try requirePrivate(path, mode: info.st_mode, what: "the token file")
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DiscfgError.invalid("context", "the token file \(path) cannot be read")
        }
        let token = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !token.isEmpty else { throw DiscfgError.invalid("context", "the token file \(path) is empty") }
        return token
    }

    /// Writes `data` to `path` through a temporary file made 0600 and renamed into place.
    static func writePrivately(_ data: Data, to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw DiscfgError(.unavailable, "cannot write \(path): \(String(cString: strerror(errno)))", field: "context")
        }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == data.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw DiscfgError(.unavailable, "cannot write \(path): \(reason)", field: "context")
        }
    }
}
