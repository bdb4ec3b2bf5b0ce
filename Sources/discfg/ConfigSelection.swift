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
    /// `--config`, `DISCFG_CONFIG`, or the path of the `.discfg` file.
    let source: String

    /// Finds the selected config: `--config`, then `DISCFG_CONFIG`, then the nearest
    /// `.discfg` in this directory or a parent.
    static func find(explicit: String?, environment: [String: String]) throws -> ConfigSelection? {
        if let explicit { return ConfigSelection(name: try ConfigName(explicit), source: "--config") }
        if let name = environment["DISCFG_CONFIG"], !name.isEmpty {
            return ConfigSelection(name: try ConfigName(name), source: "DISCFG_CONFIG")
        }
        var directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL
        while true {
            let file = directory.appendingPathComponent(fileName)
            if let data = FileManager.default.contents(atPath: file.path) {
                let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                do {
                    return ConfigSelection(name: try ConfigName(text), source: file.path)
                } catch let error as DiscfgError {
                    throw DiscfgError(.invalidArgument, "\(file.path): \(error.message)", field: "config")
                }
            }
            let parent = directory.deletingLastPathComponent()
            if parent.path == directory.path { return nil }
            directory = parent
        }
    }

    /// Writes `.discfg` in the working directory.
    static func write(_ name: ConfigName) throws -> String {
        let path = FileManager.default.currentDirectoryPath + "/" + fileName
        do {
            try Data((name.rawValue + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw DiscfgError(.unavailable, "cannot write \(path): \(error.localizedDescription)", field: "use")
        }
        return path
    }

    /// Said when a command needs a config and none is named or selected.
    static let noneSelected = "no config selected: name one, pass --config NAME, or run 'discfg use NAME'"
}
