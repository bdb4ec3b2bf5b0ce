import ArgumentParser
import Foundation
import Synchronization

/// The command line as a person wrote it, laid out the way the parser reads it.
///
/// git, kubectl and etcdctl take their global options before the subcommand
/// (`discfg --store URL get myapp key`, `discfg -f json ls`); the parser takes them
/// only after it. The layout finds the subcommand's words, and moves the global
/// options written before or between them (with their values, `--opt=value` too)
/// to just after them. Which words are global options is asked of ``GlobalOptions``
/// itself, so the two cannot disagree. Anything else before the subcommand
/// (`--help`, `--version`, `---completion`) stops the search and is left as it is.
///
/// It also finds a subcommand that does not exist (`discfg gte`), to name the
/// nearest one instead of the parser's "unexpected argument".
struct CommandLineLayout {
    /// The arguments as the parser should read them.
    private(set) var arguments: [String]
    /// The words naming the subcommand, e.g. `["schema", "set"]`.
    private(set) var commandPath: [String] = []
    /// The command those words name (the root when none does).
    private(set) var command: any ParsableCommand.Type = Discfg.self
    /// A word in the subcommand's place that names no subcommand.
    private(set) var unknownCommand: String?

    /// Lays out `arguments` (without the program's name).
    init(_ arguments: [String]) async {
        self.arguments = arguments
        var moved: [String] = []
        var rest: [String] = []
        var index = 0
        scan: while index < arguments.count {
            // Past the subcommand's last word, options are where the parser reads them.
            if !commandPath.isEmpty, command.configuration.subcommands.isEmpty { break }
            let word = arguments[index]
            if word == "--" { break }
            if word.hasPrefix("-") {
                // argument-parser's own entry points (---completion, --help, …) are its to read.
                guard !word.hasPrefix("---"), !Self.builtInFlags.contains(word) else { break }
                let taken = await GlobalOptionProbe.length(at: index, in: arguments)
                guard taken > 0 else { break }
                moved += arguments[index..<index + taken]
                index += taken
                continue
            }
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty else { break }
            guard let next = subcommands.first(where: { Self.names($0).contains(word) }) else {
                if command.configuration.defaultSubcommand == nil, !(command == Discfg.self && word == "help") {
                    unknownCommand = word
                }
                break scan
            }
            command = next
            commandPath.append(word)
            rest.append(word)
            index += 1
        }
        guard !moved.isEmpty, !commandPath.isEmpty else { return }
        self.arguments = rest + moved + arguments[index...]
    }

    /// Lays out this process's command line, and keeps its command's name for messages.
    static func ofThisProcess() async -> CommandLineLayout {
        let layout = await CommandLineLayout(Array(CommandLine.arguments.dropFirst()))
        runningCommand.withLock { $0 = layout.commandName }
        return layout
    }

    /// The running command's name, as ``ofThisProcess()`` found it.
    static var runningCommandName: String { runningCommand.withLock { $0 } }
    private static let runningCommand = Mutex("discfg")

    /// The subcommand as a person names it, for messages: `discfg schema set`.
    var commandName: String { (["discfg"] + commandPath).joined(separator: " ") }

    /// Flags argument-parser answers itself, which the probe for global options must not see.
    private static let builtInFlags: Set = ["-h", "--help", "-help", "--version", "--generate-completion-script", "--experimental-dump-help"]

    /// The names a subcommand answers to.
    static func names(_ command: any ParsableCommand.Type) -> [String] {
        [command._commandName] + command.configuration.aliases
    }

    /// The error for ``unknownCommand``, naming the nearest subcommand when one is near.
    func unknownCommandMessage() -> String? {
        guard let unknownCommand else { return nil }
        let parent = commandPath.map { $0 + " " }.joined()
        let candidates = command.configuration.subcommands.flatMap(Self.names)
        guard let nearest = Self.nearest(to: unknownCommand, in: candidates) else {
            return "unknown command '\(parent)\(unknownCommand)'; 'discfg \(parent)--help' lists the commands"
        }
        return "unknown command '\(parent)\(unknownCommand)'; did you mean '\(parent)\(nearest)'?"
    }

    /// The error for `-s` given to a command with a `--secret` flag: the original's
    /// short `--secretKey` would take the next word as an AWS key, and the value would
    /// be stored unsealed.
    func secretFlagClashMessage() -> String? {
        guard command is any SecretFlagCommand.Type, arguments.prefix(while: { $0 != "--" }).contains("-s") else { return nil }
        return "-s is ambiguous in \(commandName): write --secret to seal the value, or --secret-key for an AWS secret access key"
    }

    /// The candidate closest to `word` by edit distance (a swap of two neighbouring
    /// letters counts once), if it is close enough to be a typo.
    static func nearest(to word: String, in candidates: [String]) -> String? {
        let limit = max(1, min(2, word.count / 3))
        let scored = candidates.map { ($0, TypoDistance.between(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= limit else { return nil }
        return best.0
    }
}

/// A command with a `--secret` flag, which refuses `-s` (see ``AWSOptions``).
protocol SecretFlagCommand {}

/// The optimal string alignment distance: insertions, deletions, substitutions and
/// swaps of neighbouring characters, each one step (`gte` is one step from `get`).
enum TypoDistance {
    static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}

/// The global options as a command of their own, to ask which words are global
/// options: an async command, as their `--config` completes asynchronously.
private struct GlobalOptionProbe: AsyncParsableCommand {
    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    /// How many words at `index` are one global option (with its value), or 0.
    static func length(at index: Int, in arguments: [String]) async -> Int {
        do {
            _ = try await asyncParseAsRoot([arguments[index]])
            return 1
        } catch {
            guard message(for: error).hasPrefix("Missing value for"), index + 1 < arguments.count else { return 0 }
            return 2
        }
    }
}
