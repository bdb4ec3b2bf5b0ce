import ArgumentParser
import DiscfgCore
import DiscfgSecrets
import DiscfgWire
import Foundation

extension SnapshotFormat: ExpressibleByArgument {
    public init?(argument: String) {
        try? self.init(parsing: argument, field: "format")
    }
}

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a config's keys as JSON, YAML or env.",
        usage: "discfg export [<options>] [<config>]",
        discussion: """
        json and yaml keep everything (binary values, content types, TTLs) and \
        import back exactly; env writes NAME=value lines (/db/host becomes \
        DB_HOST) for handing configuration to a process.

        Examples:
          discfg export > myapp.json
          discfg export myapp --to yaml -o myapp.yaml
          discfg export --to env > .env
          discfg export --to env --reveal > .env       # secrets opened
          discfg export --revision 42 -o before.json   # as it was at revision 42
          discfg export myapp --prefix /db/ --to env   # only the keys under /db/

        Secrets are exported sealed, as stored, unless --reveal opens them (the \
        file then holds them in the clear, and -o writes it readable by you alone: \
        mode 0600). env output needs --reveal when the config has secrets.

        env output is for a shell or a process to source, so keys that would set \
        a variable that changes how programs load or start are refused (exit 2, \
        naming the key and the variable), as 'discfg exec' refuses them: \
        \(StartupVariables.summary). --allow-env NAME lets one through \
        (repeatable).
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    @Option(name: .long, help: "Format: json, yaml or env. Default: from -o's extension, else json.")
    var to: SnapshotFormat?

    @Option(name: [.short, .long], help: ArgumentHelp("Write to FILE instead of standard output.", valueName: "file"))
    var output: String?

    @Flag(name: .long, help: "Write secret values opened, with the config's key (which must be at hand); -o's file is made 0600.")
    var reveal = false

    @Option(name: .customLong("allow-env"), help: ArgumentHelp("With --to env: allow this variable that changes how programs load or start, such as PATH (repeatable; refused by default).", valueName: "name"))
    var allowEnv: [String] = []

    @Option(name: .long, help: ArgumentHelp("Export the config as it was at this past revision (rebuilt from history).", valueName: "r"),
            transform: { UInt64(try NumberField.revision("--revision").parse($0)) })
    var revision: UInt64?

    @Option(name: .long, help: ArgumentHelp("Export only the keys under this prefix, such as /db/.", valueName: "prefix"),
            transform: { try KeyPrefix($0) })
    var prefix: KeyPrefix?

    @Argument(help: PositionalArguments.help("[CONFIG]"), completion: ShellCompletion.configs) var arguments: [String] = []

    func run() async throws {
        try await global.run("export") { printer in
            let config = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configOnly()
            let format = to ?? output.flatMap(SnapshotFormat.init(fileExtension:)) ?? .json
            let store = try global.openStore()
            let all = try await store.exportPages(config, maxBytes: Limits.maxPageBytes, atRevision: revision.map { Revision($0) })
            let stored = prefix.map { prefix in all.mapPages { $0.filter { prefix.contains($0.key) } } } ?? all
            if format != .env, !allowEnv.isEmpty { throw usage("--allow-env applies to --to env", field: "--allow-env") }
            let pages = try secretsHandled(stored, config: config, format: format, store: store, printer: printer)
            guard let output else {
                try await format.encode(pages, chunkBytes: 64 * 1024) { printer.raw($0) }
                return
            }
            // Written beside the target and moved over it only when whole, so a failed
            // export leaves no half-written file. Opened secrets are in a file made 0600
            // by the call that creates it (O_EXCL, a name no one else has), never
            // loosened then tightened: no moment when another user could open it.
            let target = URL(fileURLWithPath: output)
            let partial = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).partial")
            let count: Int
            do {
                let fd = open(partial.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, reveal ? 0o600 : 0o666)
                guard fd >= 0 else {
                    throw DiscfgError(.unavailable, "cannot write \(output): cannot create a file in its directory: \(String(cString: strerror(errno)))", field: "--output")
                }
                let file = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
                defer { try? file.close() }
                count = try await format.encode(pages, chunkBytes: 64 * 1024) { try file.write(contentsOf: $0) }
                try file.synchronize()
                guard rename(partial.path, target.path) == 0 else {
                    throw DiscfgError(.unavailable, "cannot write \(output): \(String(cString: strerror(errno)))", field: "--output")
                }
            } catch {
                try? FileManager.default.removeItem(at: partial)
                if let error = error as? DiscfgError { throw error }
                throw DiscfgError(.unavailable, "cannot write \(output): \(error.localizedDescription)", field: "--output")
            }
            printer.note("exported \(count) keys of config \(config) at revision \(pages.header.revision) to \(output)")
        }
    }
}

extension ExportCommand {
    /// The pages with secrets opened (--reveal), kept sealed (json, yaml), or refused
    /// (env, where a sealed value is of no use to the process that reads it); env names
    /// that change how programs start refused (``StartupVariables``).
    private func secretsHandled(
        _ pages: SnapshotPages, config: ConfigName, format: SnapshotFormat, store: any ConfigStore, printer: Output
    ) throws -> SnapshotPages {
        let secrets = reveal ? try global.secretReader(store, config, output: printer) : nil
        guard secrets != nil || format == .env else { return pages }
        let revision = pages.header.revision
        let allowed = Set(allowEnv)
        return pages.mapPages { page in
            if format == .env {
                for entry in page {
                    try StartupVariables.check(
                        EnvFile.variableName(for: entry.key), key: entry.key, config: config, allowed: allowed, command: "discfg export --to env"
                    )
                }
            }
            guard page.contains(where: { $0.contentType == SecretMarker.contentType }) else { return page }
            guard let secrets else {
                throw DiscfgError.invalid("--reveal", "config \"\(config)\" has secrets; env output holds values in the clear, so it needs --reveal")
            }
            // Each secret opens only for its own item at the export's revision.
            return try await secrets.revealed(page, at: revision)
        }
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Set keys from a JSON, YAML or env file.",
        usage: "discfg import [<options>] [<config>] <file>",
        discussion: """
        The import is one change: one revision that every \
        changed key carries, one 'discfg log' entry with its message; keys whose \
        value is already the same are left alone. The file may be what \
        'discfg export' wrote, a mapping of key paths such as \
        {"/db/host": "db1", "/db/port": 5432}, or a nested mapping such as \
        {"db": {"host": "db1", "port": 5432}}, which is the same keys (as 'set / \
        --document' writes it).

        Examples:
          discfg import myapp.json
          discfg import myapp settings.yaml --replace  # and delete keys not in it
          discfg import myapp db.yaml --prefix /db/ --replace --dry-run
          discfg import myapp db.yaml --prefix /db/ --replace --if-revision 41
          discfg import --from env .env                # DB_HOST is /db/host
          cat snapshot.json | discfg import -

        --replace never removes a schema; --dry-run prints each key the import \
        would set or delete and the revision it is based on, and --if-revision \
        then applies exactly that plan, or nothing if the config moved on.
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var reason: ChangeOptions
    @OptionGroup var plan: PlanOptions

    @Option(name: .long, help: "Format: json, yaml or env. Default: from the file's extension.")
    var from: SnapshotFormat?

    @Flag(name: .long, help: "Delete keys that the file does not contain (under --prefix; never a schema).")
    var replace = false

    @Option(name: .long, help: ArgumentHelp("The part of the config the import covers: every key of the file must be under it, and --replace deletes only there.", valueName: "prefix"),
            transform: { try KeyPrefix($0) })
    var prefix: KeyPrefix?

    @Argument(help: PositionalArguments.help("[CONFIG] FILE ('-' for standard input)")) var arguments: [String] = []

    func run() async throws {
        try await reason.attributed {
            try await global.run("import") { output in
                let (config, file) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndTarget(what: "FILE")
                let snapshot = try Self.snapshot(file, format: from, formatFlag: "--from")
                let options = ImportOptions(replace: replace, prefix: prefix ?? .root)
                let store = try global.openStore()
                let flags = (replace ? " --replace" : "") + (prefix.map { " --prefix \($0)" } ?? "")
                try await Attribution.documented(snapshot.message) {
                    try await plan.run(
                        snapshot, into: config, options, store: store, output: output,
                        what: "import \(file)", apply: "discfg import \(config) \(file)" + flags, action: "import"
                    ) { "imported \(file) into \(config): " + ChangePlan.tally($0) }
                }
            }
        }
    }

    /// The keys of `file` ('-' for standard input) as an import reads them: JSON, YAML or
    /// env, in `format` or the one its extension names; `deploy start -d` reads through it too.
    /// - Parameter formatFlag: the flag that names the format, for the message when none can be told.
    static func snapshot(_ file: String, format: SnapshotFormat?, formatFlag: String) throws -> ConfigSnapshot {
        guard let format = format ?? SnapshotFormat(fileExtension: file) ?? (file == "-" ? .json : nil) else {
            throw usage("cannot tell the format of \(file) from its extension; pass \(formatFlag) json, yaml or env", field: formatFlag)
        }
        let data = try ValueInput.readFile(file, field: "file", limit: Limits.maxSnapshotBytes)
        do {
            let decoded = try format.decode(data, nested: true)
            // An env file names variables: DB_HOST is /db/host, as export --to env wrote it.
            return format == .env ? try EnvFile.keyed(decoded) : decoded
        } catch let error as DiscfgError {
            throw DiscfgError(error.code, "\(file): \(error.message)", field: error.field)
        }
    }
}
