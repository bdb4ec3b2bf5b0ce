import DiscfgCore
import Foundation

/// The config a command works on when none is named, and where that choice came from.
///
/// As in the original discfg, `discfg use NAME` writes `.discfg` in the working
/// directory; commands run in that directory or below it use NAME.
struct ConfigSelection {
    /// The file `use` writes.
    static let fileName = ".discfg"

    let name: ConfigName
    /// `--config`, `DISCFG_CONFIG`, the path of the `.discfg` file, or the context.
    let source: String

    /// Finds the selected config: `--config`, then `DISCFG_CONFIG`, then the config of a
    /// context named by `--context` or `DISCFG_CONTEXT`, then the nearest `.discfg` in
    /// this directory or a parent, then the config of the context it or the contexts
    /// file names.
    static func find(explicit: String?, environment: [String: String], context: ContextChoice? = nil) throws -> ConfigSelection? {
        if let explicit { return ConfigSelection(name: try ConfigName(explicit), source: "--config") }
        if let name = environment["DISCFG_CONFIG"], !name.isEmpty {
            return ConfigSelection(name: try ConfigName(name), source: "DISCFG_CONFIG")
        }
        let fromContext = try context.flatMap { choice in
            try choice.context.config.map { ConfigSelection(name: try ConfigName($0), source: "context \(choice.name) (\(choice.source))") }
        }
        if let fromContext, context?.isExplicit == true { return fromContext }
        if let file = try DiscfgFile.nearest(), let name = file.config {
            return ConfigSelection(name: name, source: file.path)
        }
        return fromContext
    }

    /// Writes `.discfg` in the working directory, keeping a `context:` line it holds.
    static func write(_ name: ConfigName) throws -> String {
        let path = FileManager.default.currentDirectoryPath + "/" + fileName
        let context = (try? DiscfgFile.read(path))??.context
        var text = name.rawValue + "\n"
        if let context { text += "context: \(context)\n" }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw DiscfgError(.unavailable, "cannot write \(path): \(error.localizedDescription)", field: "use")
        }
        return path
    }

    /// Said when a command needs a config and none is named or selected.
    static let noneSelected = "no config selected: name one, pass --config NAME, or run 'discfg use NAME'"
}

/// A `.discfg` file: a line naming a config (`myapp`, or `config: myapp`), a line
/// naming a context (`context: staging`), or both; blank lines and lines starting
/// with `#` are skipped.
struct DiscfgFile {
    let path: String
    let config: ConfigName?
    let context: ContextName?

    /// The nearest `.discfg` in the working directory or a parent, if any.
    static func nearest() throws -> DiscfgFile? {
        var directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL
        while true {
            if let file = try read(directory.appendingPathComponent(ConfigSelection.fileName).path) { return file }
            let parent = directory.deletingLastPathComponent()
            if parent.path == directory.path { return nil }
            directory = parent
        }
    }

    /// The file at `path`, or nil when there is none.
    /// - Throws: `invalidArgument` naming the file and its bad line.
    static func read(_ path: String) throws -> DiscfgFile? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        var config: ConfigName?
        var context: ContextName?
        do {
            for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
                let text = line.trimmingCharacters(in: .whitespaces)
                if text.isEmpty || text.hasPrefix("#") { continue }
                if let value = Self.value(of: "context:", in: text) {
                    context = try ContextName(value)
                } else {
                    config = try ConfigName(Self.value(of: "config:", in: text) ?? text)
                }
            }
        } catch let error as DiscfgError {
            throw DiscfgError(.invalidArgument, "\(path): \(error.message)", field: "config")
        }
        return DiscfgFile(path: path, config: config, context: context)
    }

    private static func value(of label: String, in line: String) -> String? {
        guard line.hasPrefix(label) else { return nil }
        return line.dropFirst(label.count).trimmingCharacters(in: .whitespaces)
    }
}
