import ArgumentParser
import DiscfgCore
import Foundation

struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show how two configs, revisions or files differ, key by key.",
        usage: "discfg diff [<options>] <a> <b>",
        discussion: """
        Each side is a config (CONFIG, as it is now), a config at a past revision \
        (CONFIG@REVISION; @REVISION alone is the selected config), or a file: a \
        snapshot as 'discfg export' writes it, a plain JSON or YAML mapping, or an \
        env file. A side is a file when it holds a '/' or ends in .json, .yaml, \
        .yml or .env, or has another ending and is a file that exists.

        One line per key that differs: added (+, only in B), removed (-, only in \
        A) or changed (~). A JSON object or array is compared as JSON, and its \
        changed members are listed by JSON Pointer beneath the key. A secret is \
        never shown: sealed values are compared as stored, and one that differs \
        (set again, even to the same value) is 'changed (secret)'. Against an env \
        file, keys are compared by the variable names export gives them \
        (/db/host as DB_HOST).

        Examples:
          discfg diff myapp@41 myapp             # what changed since revision 41
          discfg diff @41 @42                    # the selected config, two revisions
          discfg diff staging prod --prefix /db/
          discfg diff myapp before.json          # a config against an export
          discfg diff myapp .env                 # against an env file
          discfg diff myapp@41 myapp -f json     # a document for programs

        Exit codes, as diff's: 0 the same, 1 different. Trouble is never 1: 2 bad \
        usage or input (a missing file, a bad or compacted revision), 3 a config \
        not found, 5 any other error (store unavailable, ...).
        """
    )

    /// The exit code for two sides that differ, as `diff` has it.
    static let different: Int32 = 1
    /// The exit code for an error that other commands give 1: 1 means "different" here.
    static let failed: Int32 = 5

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Compare only the keys under this prefix, on both sides.", valueName: "prefix"))
    var prefix: String?

    @Argument(help: "A: CONFIG, CONFIG@REVISION or FILE", completion: ShellCompletion.configs) var a: String
    @Argument(help: "B: CONFIG, CONFIG@REVISION or FILE", completion: ShellCompletion.configs) var b: String

    func run() async throws {
        var differ = false
        do {
            try await global.run("diff") { output in
                let scope = try prefix.map(KeyPrefix.init) ?? .root
                let selected = try global.selectedConfig()
                let sides = (old: try DiffSide(parsing: a, selected: selected), new: try DiffSide(parsing: b, selected: selected))
                var opened: (any ConfigStore)?
                func store() throws -> any ConfigStore {
                    if let opened { return opened }
                    let store = try global.openStore()
                    opened = store
                    return store
                }
                let envNames = sides.old.isEnvFile || sides.new.isEnvFile
                let old = try await sides.old.read(under: scope, envNames: envNames, store: store)
                let new = try await sides.new.read(under: scope, envNames: envNames, store: store)
                let report = DiffReport(old: old, new: new, prefix: prefix == nil ? nil : scope, differences: KeyDifference.between(old.entries, new.entries))
                differ = !report.differences.isEmpty
                report.print(to: output)
            }
        } catch let exit as ExitCode where exit.rawValue == ExitStatus.error {
            throw ExitCode(Self.failed)
        }
        if differ { throw ExitCode(Self.different) }
    }
}

/// One side of a diff, as its argument names it.
enum DiffSide {
    /// A config now (`revision` nil) or at a past revision.
    case config(ConfigName, revision: Revision?, argument: String)
    /// A file in a snapshot format.
    case file(path: String, format: SnapshotFormat)

    /// Reads `CONFIG`, `CONFIG@REVISION`, `@REVISION` (the selected config) or a file
    /// path: one with a `/` or a `.json`, `.yaml`, `.yml` or `.env` ending, or with
    /// another ending (config names may hold dots) naming a file that exists.
    /// - Throws: `invalidArgument` naming the argument and what is wrong with it.
    init(parsing argument: String, selected: ConfigSelection?) throws {
        let isFile = argument.contains("/") || SnapshotFormat(fileExtension: argument) != nil
            || (argument.contains(".") && FileManager.default.fileExists(atPath: argument))
        if isFile {
            guard let format = SnapshotFormat(fileExtension: argument) else {
                throw usage("cannot tell the format of \(argument) from its extension; name it .json, .yaml, .yml or .env", field: "file")
            }
            self = .file(path: argument, format: format)
            return
        }
        guard let at = argument.lastIndex(of: "@") else {
            self = .config(try ConfigName(argument), revision: nil, argument: argument)
            return
        }
        let name = argument[..<at]
        let config: ConfigName
        if name.isEmpty {
            guard let selected else { throw usage("\(argument): \(ConfigSelection.noneSelected)", field: "config") }
            config = selected.name
        } else {
            config = try ConfigName(String(name))
        }
        do {
            let revision = try NumberField.revision("the revision").parse(argument[argument.index(after: at)...])
            self = .config(config, revision: Revision(UInt64(revision)), argument: argument)
        } catch let error as DiscfgError {
            throw DiscfgError(error.code, "\(argument): \(error.message)", field: "revision")
        }
    }

    /// Whether keys are to be compared by env variable name.
    var isEnvFile: Bool {
        if case .file(_, .env) = self { return true }
        return false
    }

    /// The side's keys under `prefix`, named as an env file names them when `envNames`.
    /// - Parameter store: opens the store, for a config side.
    func read(under prefix: KeyPrefix, envNames: Bool, store: () throws -> any ConfigStore) async throws -> DiffReport.Side {
        switch self {
        case .config(let config, let revision, let argument):
            let pages: SnapshotPages
            var entries: [ConfigSnapshot.Entry] = []
            do {
                pages = try await store().exportPages(config, maxBytes: Limits.maxPageBytes, atRevision: revision)
                for try await page in pages {
                    entries += page.filter { prefix.contains($0.key) }
                }
            } catch let error as DiscfgError where error.field == "revision" && revision != nil {
                throw DiscfgError(error.code, "\(argument): \(error.message)", field: error.field)
            }
            return DiffReport.Side(
                name: argument, config: config, revision: pages.header.revision, file: nil, format: nil,
                entries: envNames ? try EnvFile.variables(of: entries) : entries
            )
        case .file(let path, let format):
            let snapshot: ConfigSnapshot
            do {
                snapshot = try format.decode(ValueInput.readFile(path, field: "file", limit: Limits.maxSnapshotBytes), nested: true)
                try snapshot.validate()
            } catch let error as DiscfgError where !error.message.contains(path) {
                throw DiscfgError(error.code, "\(path): \(error.message)", field: error.field)
            }
            var entries = snapshot.items
            if format == .env {
                if let names = try EnvFile.variablePrefix(of: prefix) { entries = entries.filter { $0.key.path.dropFirst().hasPrefix(names) } }
            } else {
                entries = entries.filter { prefix.contains($0.key) }
                if envNames { entries = try EnvFile.variables(of: entries) }
            }
            return DiffReport.Side(name: path, config: nil, revision: snapshot.revision, file: path, format: format, entries: entries)
        }
    }
}
