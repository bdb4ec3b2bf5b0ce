import ArgumentParser
import DiscfgCore
import DiscfgStores
import Foundation

/// `discfg context`: named stores, as kubectl and etcdctl keep them.
struct ContextCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "context",
        abstract: "Save stores by name and switch between them (add, use, ls, rm, show).",
        discussion: """
        A context is a store URL with, optionally, a config, a token file and TLS files, \
        kept in $DISCFG_CONTEXTS or ~/.config/discfg/contexts.json (mode 0600). Use one \
        with --context NAME (or DISCFG_CONTEXT), a 'context: NAME' line in .discfg, or \
        'discfg context use NAME'. A flag or variable for a part (--store, --config, \
        --token, --cacert and their variables) wins over the context's; a context's \
        token and TLS files go with its store only.

        EXAMPLES:
          discfg context add prod --store https://cfg.internal:8899 --config web
          discfg context add dev --store sqlite:///home/me/dev.db
          discfg context use prod
          discfg --context dev get db/host
          discfg context ls
          discfg context show
          discfg context rm dev
        """,
        subcommands: [ContextAddCommand.self, ContextUseCommand.self, ContextListCommand.self, ContextRemoveCommand.self, ContextShowCommand.self]
    )
}

struct ContextAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Save a context: a store URL and, optionally, a config, a token file and TLS files.",
        usage: "discfg context add <name> --store <url> [--token-file <file>] [<options>]",
        discussion: """
        The token file is read each time the context is used, never copied into the \
        contexts file; it must be readable by you alone (chmod 600). Relative paths are \
        saved as absolute ones.

        EXAMPLES:
          discfg context add prod --store https://cfg.internal:8899 \\
              --token-file ~/.discfg-prod-token --cacert ca.pem
          discfg context add dev --store sqlite:dev.db --config myapp
          discfg context add dev --store sqlite:other.db --force
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @Argument(help: "The context's name: 1 to 64 letters, digits, '.', '_' or '-'.") var name: String
    @Option(name: .customLong("token-file"), help: ArgumentHelp("A file holding the bearer token for an http(s) store (mode 0600).", valueName: "file"))
    var tokenFile: String?
    @Flag(name: .long, help: "Replace a context of this name.") var force = false

    func run() async throws {
        try await global.run("context add") { output in
            let name = try ContextName(name)
            let context = try savedContext()
            let path = global.contextFilePath
            var file = try ContextFile.load(from: path) ?? ContextFile()
            if file.contexts[name.rawValue] != nil, !force {
                throw usage("a context named \(name) exists in \(path); give --force to replace it", field: "context")
            }
            file.contexts[name.rawValue] = context
            try file.save(to: path)
            ContextReport.emit(output, action: "context add", name: name, context: context, file: file) { "saved context \(name) (\(context.store)) in \(path)" }
        }
    }

    /// The context the flags describe, checked: a store URL that parses, files that are there.
    private func savedContext() throws -> StoreContext {
        guard let store = global.store else { throw usage("context add needs --store URL", field: "--store") }
        if global.token != nil {
            throw usage("a context keeps a token file, not a token: write the token to a file only you can read (chmod 600) and give --token-file", field: "--token")
        }
        guard global.configs.count <= 1 else { throw usage("--config is given \(global.configs.count) times; name one config", field: "--config") }
        var location = try StoreLocation(parsing: store)
        if case .sqlite(let path) = location, !path.hasPrefix("/") { location = .sqlite(path: Self.absolute(path)) }
        let config = try global.configs.last.map { try ConfigName($0).rawValue }
        let tokenFile = try tokenFile.map { path in
            let path = Self.absolute(path)
            guard FileManager.default.fileExists(atPath: path) else { throw usage("no token file at \(path)", field: "--token-file") }
            _ = try FilePermissions.readToken(path)
            return path
        }
        func existing(_ path: String?, _ flag: String) throws -> String? {
            guard let path else { return nil }
            let absolute = Self.absolute(path)
            guard FileManager.default.fileExists(atPath: absolute) else { throw usage("no file at \(absolute) for \(flag)", field: flag) }
            return absolute
        }
        return StoreContext(
            store: location.description, config: config, tokenFile: tokenFile,
            cacert: try existing(global.cacert, "--cacert"), cert: try existing(global.cert, "--cert"), key: try existing(global.key, "--key")
        )
    }

    static func absolute(_ path: String) -> String {
        let expanded = (path as NSString).expandingTildeInPath
        return expanded.hasPrefix("/") ? expanded : FileManager.default.currentDirectoryPath + "/" + expanded
    }
}

struct ContextUseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Make a context the current one: used when no other names a store.",
        usage: "discfg context use <name>",
        discussion: "EXAMPLE:\n  discfg context use prod"
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @Argument(help: "The context.", completion: ShellCompletion.contexts) var name: String

    func run() async throws {
        try await global.run("context use") { output in
            let name = try ContextName(name)
            let path = global.contextFilePath
            var file = try ContextFile.load(from: path) ?? ContextFile()
            let context = try file.context(name, path: path)
            file.current = name.rawValue
            try file.save(to: path)
            ContextReport.emit(output, action: "context use", name: name, context: context, file: file) { "using context \(name) (\(context.store))" }
        }
    }
}

struct ContextRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove a context (its token file is left as it is).",
        usage: "discfg context rm <name>",
        discussion: "EXAMPLE:\n  discfg context rm dev",
        aliases: ["remove", "delete"]
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @Argument(help: "The context.", completion: ShellCompletion.contexts) var name: String

    func run() async throws {
        try await global.run("context rm") { output in
            let name = try ContextName(name)
            let path = global.contextFilePath
            var file = try ContextFile.load(from: path) ?? ContextFile()
            let context = try file.context(name, path: path)
            file.contexts[name.rawValue] = nil
            if file.current == name.rawValue { file.current = nil }
            try file.save(to: path)
            ContextReport.emit(output, action: "context rm", name: name, context: context, file: file) { "removed context \(name)" }
        }
    }
}
