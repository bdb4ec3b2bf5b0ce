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

    static let noneSelected = "no config selected: name one first (discfg get myapp KEY), pass --config NAME, or run 'discfg use NAME'"
}

/// Positional arguments read the way the original discfg read them: the config name
/// may come first, or be left out when one is selected.
struct PositionalArguments {
    let arguments: [String]
    let selected: ConfigSelection?

    /// `[config] key [value]` for `set`: with a selected config, two arguments are
    /// `key value` unless the first one is the selected config's name.
    func configKeyValue() throws -> (ConfigName, String, String?) {
        switch arguments.count {
        case 3:
            return (try ConfigName(arguments[0]), arguments[1], arguments[2])
        case 2:
            if let selected, arguments[0] != selected.name.rawValue {
                return (selected.name, arguments[0], arguments[1])
            }
            return (try ConfigName(arguments[0]), arguments[1], nil)
        case 1:
            guard let selected else { throw usage(ConfigSelection.noneSelected, field: "config") }
            return (selected.name, arguments[0], nil)
        default:
            throw usage("expected [CONFIG] KEY [VALUE], got \(arguments.count) arguments")
        }
    }

    /// `[config] target`: one argument uses the selected config, two name it.
    func configAndTarget(what: String) throws -> (ConfigName, String) {
        switch arguments.count {
        case 2:
            return (try ConfigName(arguments[0]), arguments[1])
        case 1:
            guard let selected else { throw usage(ConfigSelection.noneSelected, field: "config") }
            return (selected.name, arguments[0])
        default:
            throw usage("expected [CONFIG] \(what), got \(arguments.count) arguments")
        }
    }

    /// `[config] [target]`: no argument is the selected config's whole tree; one
    /// argument is a target in the selected config (or, with none selected, a config).
    func configAndOptionalTarget(what: String) throws -> (ConfigName, String?) {
        switch arguments.count {
        case 2:
            return (try ConfigName(arguments[0]), arguments[1])
        case 1:
            if let selected { return (selected.name, arguments[0] == selected.name.rawValue ? nil : arguments[0]) }
            return (try ConfigName(arguments[0]), nil)
        case 0:
            guard let selected else { throw usage(ConfigSelection.noneSelected, field: "config") }
            return (selected.name, nil)
        default:
            throw usage("expected [CONFIG] [\(what)], got \(arguments.count) arguments")
        }
    }

    /// `[config]`: the named config or the selected one.
    func configOnly() throws -> ConfigName {
        switch arguments.count {
        case 1: return try ConfigName(arguments[0])
        case 0:
            guard let selected else { throw usage(ConfigSelection.noneSelected, field: "config") }
            return selected.name
        default: throw usage("expected at most one config name, got \(arguments.count) arguments")
        }
    }
}
