import ArgumentParser
import DiscfgCore
import DiscfgSQLite
import DiscfgStores
import Foundation

/// What the shell offers on TAB for config names, keys and token ids, read from the
/// store and config that the words on the command line select.
///
/// The completion scripts (`discfg --generate-completion-script bash|zsh|fish`) run
/// `discfg ---completion …` on every TAB, so a lookup must never get in the way: it
/// prints nothing on standard error, reads nothing from standard input, creates no store
/// file, and gives up after ``deadline``: a dead server or an address that never
/// answers then offers nothing instead of hanging the shell.
enum ShellCompletion {
    /// The longest a lookup may take before the shell is answered with nothing.
    static let deadline: Duration = .milliseconds(900)
    /// The most candidates offered at once.
    static let limit = 200

    /// Config names.
    static let configs = CompletionKind.custom { words, index, prefix in
        await answer(words, index) { lookup in try await lookup.configNames(prefix) }
    }

    /// A `[CONFIG] KEY` argument: keys of the config in effect (the one named earlier on
    /// the line, else the selected one) under the typed prefix, and config names while
    /// no config is named on the line.
    static let configOrKey = CompletionKind.custom { words, index, prefix in
        await answer(words, index) { lookup in try await lookup.configsOrKeys(prefix) }
    }

    /// A `[CONFIG] TARGET` argument of `schema get` and `schema rm`: the targets of the
    /// schemas of the config in effect, and config names while no config is named.
    static let schemaTargets = CompletionKind.custom { words, index, prefix in
        await answer(words, index) { lookup in try await lookup.configsOrSchemaTargets(prefix) }
    }

    /// Ids of the tokens the store (or server) keeps.
    static let tokenIDs = CompletionKind.custom { words, index, prefix in
        await answer(words, index) { lookup in try await lookup.tokenIDs(prefix) }
    }

    /// Runs `lookup` for the words of a command line with the shell's rules: quiet, and
    /// nothing on any failure or past the deadline.
    private static func answer(
        _ words: [String], _ index: Int, _ lookup: @escaping @Sendable (CompletionLookup) async throws -> [String]
    ) async -> [String] {
        silenceStandardStreams()
        let others = words.indices.filter { $0 != index && $0 > 0 }.map { CompletionLookup.unquoted(words[$0]) }
        return await withDeadline(deadline) {
            try await lookup(CompletionLookup(words: others, options: await CompletionLookup.globalOptions(in: others)))
        } ?? []
    }

    /// The result of `work`, or nil when it fails or has not finished within `limit`.
    ///
    /// A store call may block in a system call that cancellation cannot interrupt (a
    /// connect to an address that never answers), so the answer does not wait for the
    /// work to end: the process exits once the shell has its answer.
    static func withDeadline<T: Sendable>(_ limit: Duration, _ work: @escaping @Sendable () async throws -> T) async -> T? {
        let (results, continuation) = AsyncStream.makeStream(of: T?.self)
        let worker = Task {
            continuation.yield(try? await work())
            continuation.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            continuation.yield(nil)
            continuation.finish()
        }
        var iterator = results.makeAsyncIterator()
        let first = await iterator.next() ?? nil
        worker.cancel()
        timer.cancel()
        return first
    }

    /// Standard error goes to /dev/null and standard input comes from it: the shell
    /// reads standard output as candidates, and a message or a prompt would land in the
    /// user's command line.
    private static func silenceStandardStreams() {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { return }
        dup2(null, STDERR_FILENO)
        dup2(null, STDIN_FILENO)
        close(null)
    }
}

/// One completion's view of the command line: the store and config its words select,
/// through the same options and selection rules as the command itself.
struct CompletionLookup: Sendable {
    /// The words on the line other than the program and the word being completed.
    let words: [String]
    /// The global options found among the words (`--store`, `--config`, AWS flags, …).
    let options: GlobalOptions?

    /// Config names starting with `prefix`.
    func configNames(_ prefix: String) async throws -> [String] {
        try await configNames(in: store()).filter { $0.hasPrefix(prefix) }
    }

    /// Keys under `prefix` in the config in effect, plus config names when none is named.
    func configsOrKeys(_ prefix: String) async throws -> [String] {
        try await configsOr(prefix) { store, config in try await keys(in: config, of: store, matching: prefix) }
    }

    /// Targets of the schemas in the config in effect that start with `prefix`, plus
    /// config names when none is named.
    func configsOrSchemaTargets(_ prefix: String) async throws -> [String] {
        try await configsOr(prefix) { store, config in
            try await store.schemas(in: config).map(\.target.path).filter { $0.hasPrefix(prefix) }.sorted()
        }
    }

    /// Config names starting with `prefix` while no config is named on the line (and the
    /// word is not a path), then what `inConfig` finds in the config in effect.
    private func configsOr(
        _ prefix: String, _ inConfig: (any ConfigStore, ConfigName) async throws -> [String]
    ) async throws -> [String] {
        let store = try store()
        let configs = try await configNames(in: store)
        let named = words.first { !$0.hasPrefix("-") && configs.contains($0) }
        var candidates: [String] = []
        if named == nil, !prefix.hasPrefix("/") {
            candidates += configs.filter { $0.hasPrefix(prefix) }
        }
        let selected = try? options?.selectedConfig()?.name
        if let config = try named.map(ConfigName.init) ?? selected {
            candidates += try await inConfig(store, config)
        }
        return Array(candidates.prefix(ShellCompletion.limit))
    }

    /// Ids of valid tokens starting with `prefix`.
    func tokenIDs(_ prefix: String) async throws -> [String] {
        try await existingStore().openTokenAdministration().tokens().map(\.id).filter { $0.hasPrefix(prefix) }
    }

    /// The keys and sub-directories of the directory `prefix` is in that start with it,
    /// spelled as typed: with the leading slash, or without it (`db/ho` → `db/host`).
    private func keys(in config: ConfigName, of store: any ConfigStore, matching prefix: String) async throws -> [String] {
        let typedSlash = prefix.hasPrefix("/")
        let path = typedSlash ? prefix : "/" + prefix
        let directory = try KeyPrefix(String(path[...path.lastIndex(of: "/")!]))
        var found: [String] = []
        var cursor: String?
        repeat {
            let page = try await store.list(in: config, ListQuery(prefix: directory, recursive: false, limit: ShellCompletion.limit, cursor: cursor))
            found += (page.items.map(\.key.path) + page.prefixes.map(\.path)).filter { $0.hasPrefix(path) }
            cursor = page.nextCursor
        } while cursor != nil && found.count < ShellCompletion.limit
        return found.sorted().map { typedSlash ? $0 : String($0.dropFirst()) }
    }

    private func configNames(in store: any ConfigStore) async throws -> [String] {
        try await store.listConfigs().map(\.name.rawValue).sorted()
    }

    /// The store the line selects, opened with no progress messages.
    private func store() throws -> any ConfigStore {
        try existingStore().openStore()
    }

    /// The options of a store that is already there. Opening a SQLite store creates,
    /// sets up or upgrades its file; a completion only reads one set up by this build.
    private func existingStore() throws -> GlobalOptions {
        guard let options else { throw CompletionUnavailable() }
        if case .sqlite(let path) = try options.storeLocation() {
            let file = try SQLiteStoreFile(path: path)
            guard file.isSQLite, file.schemaVersion == SQLiteStoreFile.supportedSchemaVersion else { throw CompletionUnavailable() }
        }
        return options
    }

    /// The global options among `words`, found by asking ``GlobalOptions`` itself which
    /// words (alone, or with the word after them) it accepts, so that completion knows
    /// the same spellings as the commands.
    static func globalOptions(in words: [String]) async -> GlobalOptions? {
        var picked: [String] = []
        var index = words.startIndex
        while index < words.endIndex, words[index] != "--" {
            let word = words[index]
            if word.hasPrefix("-"), word.count > 1 {
                if await GlobalOptionsOnly.parse([word]) != nil {
                    picked.append(word)
                } else if index + 1 < words.endIndex, await GlobalOptionsOnly.parse([word, words[index + 1]]) != nil {
                    picked += [word, words[index + 1]]
                    index += 1
                }
            }
            index += 1
        }
        guard var options = await GlobalOptionsOnly.parse(picked) else { return nil }
        options.format = .silent
        return options
    }

    /// A shell word as the command would get it, for the simple quoting people type
    /// (`'sqlite:///tmp/a b.db'`); shells pass completion words verbatim.
    static func unquoted(_ word: String) -> String {
        for quote in ["'", "\""] where word.count >= 2 && word.hasPrefix(quote) && word.hasSuffix(quote) {
            return String(word.dropFirst().dropLast())
        }
        return word
    }
}

/// The global options as a command of their own, to read them out of a completion's
/// words: an async command, as their `--config` completes asynchronously.
private struct GlobalOptionsOnly: AsyncParsableCommand {
    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    /// The options `arguments` give, or nil when they are not all global options.
    static func parse(_ arguments: [String]) async -> GlobalOptions? {
        (try? await asyncParseAsRoot(arguments) as? Self)?.global
    }
}

/// Completion has nothing to offer (no store options, or no store file yet).
private struct CompletionUnavailable: Error {}
