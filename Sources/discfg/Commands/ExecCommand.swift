import ArgumentParser
import DiscfgCore
import DiscfgSecrets
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct ExecCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command with a config's keys as environment variables.",
        usage: "discfg exec [<options>] [<config>] -- <command> [<argument> ...]",
        discussion: """
        Every key under --prefix becomes a variable named as 'export --to env' \
        names it, from the key's path below the prefix: with --prefix /app, \
        /app/db/host is DB_HOST. Secrets are opened here, with the config's key, \
        and handed to the command only in its environment: never on a command \
        line, never in a log. Variables already set are overridden.

        Variables that change how programs load or start are refused: discfg \
        exits with status 2 naming the key and the variable, and runs nothing. \
        Whoever can write the config would otherwise run code on every host that \
        runs exec. Refused are: \(StartupVariables.summary).

        --allow-env NAME lets one through (repeatable). With --watch, a change \
        that would set one is not applied: the command keeps running with the \
        variables it has, and a warning names the key; the next change without it \
        restarts as usual.

        Without --watch, discfg becomes the command (exec): its exit status and \
        signals are the command's own. With --watch, discfg stays as its parent, \
        forwards the signals it gets, and restarts it (or sends it --signal) when \
        a key under the prefix changes; it exits with the command's status when \
        the command ends by itself.

        Examples:
          discfg exec myapp -- ./server --port 8080
          discfg exec myapp --prefix /payments \\
              --only DB_PASSWORD --only DB_HOST -- env
          discfg exec myapp --strict -- ./migrate
          discfg exec myapp --watch -- ./server        # restarted on a change
          discfg exec myapp --watch --signal HUP -- nginx -g 'daemon off;'
          discfg exec myapp --allow-env NODE_OPTIONS -- node server.js

        \(ExitStatus.help)
          The command's own exit status once it runs (128 + N when signal N ended it).
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Only keys under this prefix; names are made from the path below it. Default: /.", valueName: "prefix"))
    var prefix: String?

    @Option(name: .long, help: ArgumentHelp("Only this variable (repeatable): a name such as DB_HOST, or a key path such as /db/host.", valueName: "name"))
    var only: [String] = []

    @Flag(name: .long, help: "Fail when two keys make the same name or a value cannot be an environment variable (instead of leaving them out with a warning).")
    var strict = false

    @Flag(name: .long, help: "Stay running and restart the command when a key under the prefix changes.")
    var watch = false

    @Option(name: .customLong("allow-env"), help: ArgumentHelp("Allow this variable that changes how programs load or start, such as PATH or NODE_OPTIONS (repeatable; refused by default).", valueName: "name"))
    var allowEnv: [String] = []

    @Option(name: .long, help: ArgumentHelp("With --watch: send this signal (HUP, USR1, …, or a number 1-31) instead of restarting.", valueName: "signal"),
            transform: ExecCommand.signalNumber)
    var signal: Int32?

    @Option(name: .long, help: ArgumentHelp("With --watch: seconds a restarted command has to stop after SIGTERM before SIGKILL (1-3600). Default: 10.", valueName: "seconds"),
            transform: { Int(try NumberField("--grace", 1...3600).parse($0)) })
    var grace: Int = 10

    @Argument(help: ArgumentHelp("The config (default: the selected one).", discussion: PositionalArguments.rule), completion: ShellCompletion.configs) var name: String?

    @Argument(parsing: .postTerminator, help: "-- COMMAND [ARGS…]: the command, after --.") var command: [String] = []

    func run() async throws {
        try await global.run("exec") { output in
            guard !command.isEmpty else { throw usage("no command given: discfg exec [CONFIG] -- COMMAND [ARGS…]", field: "command") }
            let config = try PositionalArguments(arguments: name.map { [$0] } ?? [], selected: global.selectedConfig()).configOnly()
            let prefix = try prefix.map(KeyPrefix.init) ?? .root
            if signal != nil, !watch { throw usage("--signal applies to --watch", field: "--signal") }
            let reload = signal
            let store = try global.openStore()
            let source = ExecEnvironment(
                store: store, config: config, prefix: prefix, only: only, strict: strict, allowed: Set(allowEnv),
                secrets: try global.secretReader(store, config, output: output)
            )
            let (variables, revision) = try await source.read { output.warn($0) }
            guard watch else {
                try Self.replaceProcess(command, variables: variables)
            }
            let supervisor = Supervisor(command: command, grace: .seconds(grace), reload: reload) { output.warn($0) }
            let status = try await supervisor.run(variables: variables) {
                await store.watch(config, scope: .prefix(prefix), from: revision.next)
            } refresh: {
                try await source.read { output.warn($0) }.variables
            }
            throw ExitCode(status)
        }
    }

    /// A signal by name (`HUP`, `SIGHUP`) or number.
    static func signalNumber(_ text: String) throws -> Int32 {
        let names: [String: Int32] = [
            "HUP": SIGHUP, "INT": SIGINT, "QUIT": SIGQUIT, "TERM": SIGTERM, "USR1": SIGUSR1, "USR2": SIGUSR2,
            "WINCH": SIGWINCH, "ALRM": SIGALRM,
        ]
        let name = text.uppercased().hasPrefix("SIG") ? String(text.uppercased().dropFirst(3)) : text.uppercased()
        if let number = names[name] { return number }
        if let number = try? NumberField("--signal", 1...31).parse(text) { return Int32(number) }
        throw usage("--signal \(text) is not one of: \(names.keys.sorted().joined(separator: ", ")), or a number 1-31", field: "--signal")
    }

    /// Becomes `command` with `variables` added to this process's environment.
    private static func replaceProcess(_ command: [String], variables: [(name: String, value: String)]) throws -> Never {
        for (name, value) in variables { setenv(name, value, 1) }
        // The command starts as any program would: every signal at its default and none
        // blocked. exec keeps both from the calling thread, and this one may be a worker
        // thread that blocks signals.
        for number in Int32(1)..<32 where number != SIGKILL && number != SIGSTOP { Glibc.signal(number, SIG_DFL) }
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        InheritedDescriptors.closeOwnOnExec()
        // The command gets the core limit discfg was started with; discfg lowered its own
        // while it held opened secrets, and execve makes the command dumpable again.
        CoreDumps.restoreLimit()
        let argv = command.map { strdup($0) } + [nil]
        execvp(command[0], argv)
        let reason = String(cString: strerror(errno))
        throw DiscfgError.invalid("command", "cannot run \(command[0]): \(reason)")
    }
}

/// The variables a config's keys make.
struct ExecEnvironment: Sendable {
    let store: any ConfigStore
    let config: ConfigName
    let prefix: KeyPrefix
    let only: [String]
    let strict: Bool
    /// Names of ``StartupVariables`` the operator allowed (`--allow-env`).
    let allowed: Set<String>
    let secrets: SecretReader

    /// The variables, in key order, and the revision they were read at.
    ///
    /// Names are settled (refused ones throw) before any secret is opened, and only the
    /// secrets that become variables are.
    func read(warn: (String) -> Void) async throws -> (variables: [(name: String, value: String)], revision: Revision) {
        let (stored, revision) = try await store.items(in: config, under: prefix)

        var owners: [String: Key] = [:]
        var wanted = Set(only)
        var chosen: [(name: String, item: Item)] = []
        // discfg's own records (the schemas under /.discfg/) are no program's settings.
        for item in stored where !SchemaTarget.isReserved(item.key) {
            let relative = try Key(String(item.key.path.dropFirst(prefix.path.count - 1)))
            let name = EnvFile.variableName(for: relative)
            let names: Set = [name, item.key.path, relative.path, String(relative.path.dropFirst())]
            guard only.isEmpty || !names.isDisjoint(with: only) else { continue }
            wanted.subtract(names)
            // Refused in every mode, --strict or not: a warning would still run the command.
            try StartupVariables.check(name, key: item.key, config: config, allowed: allowed, command: "discfg exec", otherWays: "leave it out (--prefix, --only)")
            if let other = owners[name] {
                let problem = "keys \(other) and \(item.key) both make \(name)"
                if strict { throw DiscfgError(.notRepresentable, problem + "; rename one, or leave --strict off to keep the first", field: "key") }
                warn(problem + "; keeping \(other)")
                continue
            }
            owners[name] = item.key
            chosen.append((name, item))
        }
        var variables: [(name: String, value: String)] = []
        for (name, stored) in chosen {
            let item = try await secrets.revealed(stored)
            guard let text = String(validating: item.value, as: UTF8.self), !text.unicodeScalars.contains("\u{0}") else {
                let problem = "key \(item.key) holds bytes an environment variable cannot carry (binary data or NUL)"
                if strict { throw DiscfgError(.notRepresentable, problem, field: "key") }
                warn(problem + "; left out")
                continue
            }
            variables.append((name, text))
        }
        if !wanted.isEmpty {
            throw DiscfgError(.keyNotFound, "--only \(wanted.sorted().joined(separator: ", ")): no such key under \(prefix) in config \"\(config)\"", field: "--only")
        }
        return (variables, revision)
    }
}
