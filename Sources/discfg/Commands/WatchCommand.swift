import ArgumentParser
import DiscfgCore
import DiscfgSecrets
import DiscfgWire
import Foundation

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print changes to a key or a prefix as they happen, until Ctrl-C.",
        usage: "discfg watch [<options>] [<config>] [<key> | <prefix>/]",
        discussion: """
        A target ending in '/' (or given with --prefix) is a directory; otherwise \
        it is one key. With no target, the whole config is watched. \
        --from-revision replays history from that revision first, with no gap and \
        no repeat. -f json prints one JSON envelope per line.

        Examples:
          discfg watch                   # everything in the selected config
          discfg watch /db/
          discfg watch myapp /feature/x --from-revision 120 -f json
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    @Flag(name: .long, help: "Treat the target as a prefix even without a trailing '/'.")
    var prefix = false

    @Option(name: .customLong("from-revision"), help: ArgumentHelp("Start with the changes from this revision on (1 or more).", valueName: "r"),
            transform: { UInt64(try NumberField("--from-revision", 1...Int64(Revision.max.rawValue)).parse($0)) })
    var fromRevision: UInt64?

    @Flag(name: .long, help: "Show secret values, opened with the config's key (which must be at hand).")
    var reveal = false

    @Argument(help: PositionalArguments.help("[CONFIG] [KEY or PREFIX/]"), completion: ShellCompletion.configOrKey) var arguments: [String] = []

    func run() async throws {
        try await global.run("watch") { output in
            let (config, target) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndOptionalTarget(what: "TARGET")
            let scope: WatchScope = if let target, !prefix, !target.hasSuffix("/") {
                .key(try Key(target))
            } else {
                .prefix(try target.map(KeyPrefix.init) ?? .root)
            }
            let store = try global.openStore()
            let info = try await store.configInfo(config)
            if let fromRevision, fromRevision == 0 {
                throw usage("--from-revision starts at 1", field: "--from-revision")
            }
            Self.exitCleanlyOnInterrupt()
            // The reader (and with it CoreDumps.disable) is made before "watching" is said,
            // so a process that says it watches with --reveal already holds no core limit.
            let secrets = reveal ? try global.secretReader(store, config, output: output) : nil
            output.note("watching \(scope) in config \(config) from revision \(fromRevision.map(String.init) ?? "\(info.revision.next)") (Ctrl-C to stop)")
            for try await stored in await store.watch(config, scope: scope, from: fromRevision.map { Revision($0) }) {
                let event = try await secrets?.revealedKeepingUnopened(stored) { output.warn($0) } ?? stored
                var envelope = Envelope(action: "watch")
                envelope.config = config.rawValue
                envelope.event = EventDocument(event)
                envelope.revision = event.revision
                output.emitStreaming(envelope) { Self.describe(event) }
            }
        }
    }

    /// One line per event: `12  put     /db/host = db2 (version 3)`.
    static func describe(_ event: Event) -> String {
        let revision = String(event.revision.rawValue).padding(toLength: 6, withPad: " ", startingAt: 0)
        let kind = event.kind.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
        switch event.kind {
        case .put:
            let item = event.item!
            return "\(revision)\(kind)\(event.key) = \(Show.preview(item, limit: 60)) (version \(item.version))"
        case .delete, .expire:
            return "\(revision)\(kind)\(event.key)"
        }
    }

    /// Ctrl-C ends a watch normally: exit code 0, not death by signal.
    private static func exitCleanlyOnInterrupt() {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        for number in [SIGINT, SIGTERM] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler { Foundation.exit(ExitStatus.ok) }
            source.resume()
            signalSources.append(source)
        }
    }

    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []
}
