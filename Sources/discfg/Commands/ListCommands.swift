import ArgumentParser
import DiscfgCore
import DiscfgSecrets
import DiscfgWire
import Foundation

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List keys under a prefix.",
        usage: "discfg ls [<options>] [<config>] [<prefix>]",
        discussion: """
        Without --recursive, shows the prefix's direct keys and its sub-directories \
        (like ls); with it, every key below. The prefix is a directory: /db and \
        /db/ both list the keys under /db/.

        Examples:
          discfg ls
          discfg ls /db -r
          discfg ls myapp /db/ --recursive -f json
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    @Flag(name: [.short, .long], help: "List every key below the prefix, not only its direct children.")
    var recursive = false

    @Option(name: .long, help: ArgumentHelp("Fetch this many entries per request (1-1000). Default: 1000.", valueName: "n"),
            transform: { Int(try NumberField.pageSize.named("--page-size").parse($0)) })
    var pageSize: Int = Limits.maxPageSize

    @Flag(name: .long, help: "Show secret values, opened with the config's key (which must be at hand).")
    var reveal = false

    @Argument(help: PositionalArguments.help("[CONFIG] [PREFIX]"), completion: ShellCompletion.configOrKey) var arguments: [String] = []

    func run() async throws {
        try await global.run("list") { output in
            let (config, target) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndOptionalTarget(what: "PREFIX")
            let prefix = try target.map(KeyPrefix.init) ?? .root
            let store = try global.openStore()
            var items: [Item] = []
            var prefixes: [KeyPrefix] = []
            var cursor: String?
            var revision = Revision.zero
            repeat {
                let page = try await store.list(in: config, ListQuery(prefix: prefix, recursive: recursive, limit: pageSize, cursor: cursor))
                items += page.items
                prefixes += page.prefixes
                revision = page.revision
                cursor = page.nextCursor
            } while cursor != nil
            if reveal { items = try await global.secretReader(store, config, output: output).revealed(items) }
            var envelope = Envelope(action: "list")
            envelope.config = config.rawValue
            envelope.items = items.map(ItemDocument.init)
            envelope.prefixes = recursive ? nil : prefixes.map(\.path)
            envelope.revision = revision
            output.emit(envelope) {
                guard !items.isEmpty || !prefixes.isEmpty else { return "no keys under \(prefix) in config \(config)" }
                let now = Date()
                var rows = items.map { item in
                    [item.key.path, String(item.version), String(item.modRevision.rawValue), Show.relative(item.modifiedAt, now: now),
                     Show.preview(item, limit: 40) + (item.expiresAt == nil ? "" : " (\(Show.expiry(item, now: now)))")]
                }
                rows += prefixes.map { [$0.path, "", "", "", ""] }
                rows.sort { $0[0].utf8.lexicographicallyPrecedes($1[0].utf8) }
                return Show.table(["KEY", "VERSION", "REVISION", "MODIFIED", "VALUE"], rows)
            }
        }
    }
}

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show a key's past changes, newest first.",
        usage: "discfg history [<options>] [<config>] <key>",
        discussion: """
        Each change has the config revision it made; 'discfg get KEY --revision R' \
        reads the key as it was then. Each shows who made it and why (see 'discfg \
        log', which lists a config's changes whole). How much history is kept is a \
        config setting (discfg update --history).

        Examples:
          discfg history db/host
          discfg history myapp /db/host --limit 5 -f json
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    // -l is the original discfg's --region, so the short form of --limit is -n.
    @Option(name: [.customShort("n"), .long], help: ArgumentHelp("Show at most this many changes (1-1000). Default: 20.", valueName: "n"),
            transform: { Int(try NumberField.pageSize.named("--limit").parse($0)) })
    var limit: Int = 20

    @Flag(name: .long, help: "Show secret values, opened with the config's key (which must be at hand).")
    var reveal = false

    @Argument(help: PositionalArguments.help("[CONFIG] KEY"), completion: ShellCompletion.configOrKey) var arguments: [String] = []

    func run() async throws {
        try await global.run("history") { output in
            let (config, rawKey) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndTarget(what: "KEY")
            let key = try Key(rawKey)
            let store = try global.openStore()
            var page = try await store.history(of: key, in: config, HistoryQuery(limit: limit))
            if reveal {
                let secrets = try global.secretReader(store, config, output: output)
                var events: [Event] = []
                for event in page.events { events.append(try await secrets.revealedKeepingUnopened(event) { output.warn($0) }) }
                page.events = events
            }
            var envelope = Envelope(action: "history")
            envelope.config = config.rawValue
            envelope.events = page.events.map(EventDocument.init)
            output.emit(envelope) {
                guard !page.events.isEmpty else { return "no history for \(key) in config \(config)" }
                let now = Date()
                var text = Show.tableWithoutTrailingSpace(
                    ["REVISION", "CHANGE", "VERSION", "WHEN", "BY", "VALUE", "MESSAGE"],
                    page.events.map { event in
                        [String(event.revision.rawValue), event.kind.rawValue, event.item.map { String($0.version) } ?? "-",
                         Show.relative(event.at, now: now), Show.principal(event.attribution), event.item.map { Show.preview($0, limit: 50) } ?? "",
                         event.attribution?.message.map { Show.preview(Data($0.utf8), limit: 60) } ?? ""]
                    }
                )
                if page.nextBefore != nil { text += "\n(older changes exist; use --limit to see more)" }
                return text
            }
        }
    }
}
