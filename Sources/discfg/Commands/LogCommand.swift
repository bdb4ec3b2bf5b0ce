import ArgumentParser
import DiscfgCore
import DiscfgWire
import Foundation

struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "List a config's changes, newest first: who made each and why.",
        usage: "discfg log [<options>] [<config>] [<prefix>]",
        discussion: """
        One line per change: the revision it made, when, who made it, the keys it \
        changed (under PREFIX, when given) and its message. A transaction or an \
        import is one change however many keys it wrote.

        Who is recorded where the change was authenticated, never taken from what \
        a client says: a token as its description (or token:ID), an IAM caller as \
        iam:ARN, a client certificate as certificate:SUBJECT, a command on this \
        machine as local:USER@HOST, a server without tokens as anonymous, a TTL \
        running out as 'TTL expiry'. Changes made before discfg recorded who show \
        as unknown. Why is the message given with the change: -m on set, delete, \
        patch, txn, import, the Discfg-Message header over REST, or a txn or import \
        document's "message".

        Examples:
          discfg log                               # the last 20 changes
          discfg log myapp /db/ --since 2h         # changes under /db/ in 2 hours
          discfg log --by ops-admin                # by a token's description or id
          discfg log --by unknown                  # changes recorded without who
          discfg log --revision 42 -f json         # one change, every key it wrote

        How far back it reaches is the config's history setting (discfg update \
        --history); -f json prints the changes' events, newest revision first, each \
        with "by" and "message".
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Only changes by this principal: a token's description or id, kind:id (iam:ARN, local:USER@HOST), or 'unknown'.", valueName: "who"))
    var by: String?

    @Option(name: .long, help: ArgumentHelp("Only changes since this long ago (30m, 2h, 7d) or this time (2026-05-01T12:00:00Z).", valueName: "when"))
    var since: String?

    @Option(name: .long, help: ArgumentHelp("Only the change that made this revision.", valueName: "revision"),
            transform: { UInt64(try NumberField.revision("--revision").parse($0)) })
    var revision: UInt64?

    @Option(name: [.customShort("n"), .long], help: ArgumentHelp("Show at most this many changes (1-1000). Default: 20.", valueName: "n"),
            transform: { Int(try NumberField.pageSize.named("--limit").parse($0)) })
    var limit: Int = 20

    @Argument(help: PositionalArguments.help("[CONFIG] [PREFIX]"), completion: ShellCompletion.configOrKey) var arguments: [String] = []

    func run() async throws {
        try await global.run("log") { output in
            let (config, target) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndOptionalTarget(what: "PREFIX")
            let prefix = try target.map(KeyPrefix.init) ?? .root
            let now = Date()
            let query = ChangeLogQuery(prefix: prefix, by: by, since: try since.map { try Self.moment($0, now: now) }, revision: revision.map { Revision($0) }, limit: limit)
            let entries = try await global.openStore().changeLog(in: config, query)
            var envelope = Envelope(action: "log")
            envelope.config = config.rawValue
            envelope.events = entries.flatMap(\.events).map(EventDocument.init)
            output.emit(envelope) {
                guard !entries.isEmpty else { return "no changes\(prefix == .root ? "" : " under \(prefix)") in config \(config) match" }
                return Show.tableWithoutTrailingSpace(
                    ["REVISION", "WHEN", "BY", "KEYS", "MESSAGE"],
                    entries.map { entry in
                        [String(entry.revision.rawValue), Show.relative(entry.at, now: now), Show.principal(entry.attribution),
                         Self.keys(entry.events), entry.attribution?.message.map { Show.preview(Data($0.utf8), limit: 60) } ?? ""]
                    }
                )
            }
        }
    }

    /// The keys a change wrote, `-` before those it removed, at most three then a count.
    static func keys(_ events: [Event]) -> String {
        let named = events.map { ($0.kind == .put ? "" : "-") + $0.key.path }
        return named.count <= 3 ? named.joined(separator: ", ") : named.prefix(3).joined(separator: ", ") + " and \(named.count - 3) more"
    }

    /// `--since`: a duration back from `now`, or a time.
    static func moment(_ text: String, now: Date) throws -> Date {
        if let date = TimestampFormat.date(from: text) { return date }
        guard let seconds = try? TTLParser.seconds(text) else {
            throw usage("--since \"\(text)\" is neither a duration such as 30m, 2h or 7d nor a time such as 2026-05-01T12:00:00Z", field: "--since")
        }
        return now.addingTimeInterval(-Double(seconds))
    }
}

extension Show {
    /// ``table(_:_:)`` without the padding a row leaves before an empty last column (a
    /// change without a message).
    static func tableWithoutTrailingSpace(_ header: [String], _ rows: [[String]]) -> String {
        table(header, rows).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var line = Substring(line)
            while line.last == " " { line = line.dropLast() }
            return String(line)
        }.joined(separator: "\n")
    }

    /// Who made a change, as a person reads it: a token's description, else `kind:id`;
    /// `unknown` for a change recorded without.
    static func principal(_ attribution: Attribution?) -> String {
        attribution?.principal.displayName ?? "unknown"
    }
}
