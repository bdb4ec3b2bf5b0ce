import ArgumentParser
import DiscfgCore
import Foundation
import Synchronization

/// Positional arguments `[CONFIG] …`, read by one rule for every command that takes
/// them (``rule``), as the original discfg read them (`discfg set myconfig key value`,
/// `discfg get myconfig key`), and with a config chosen by `discfg use`.
///
/// ```swift
/// // discfg set greeting hello world, config demo selected:
/// let (config, key, value) = try PositionalArguments(arguments: arguments, selected: selection).configKeyValue()
/// // config "greeting", key "hello", value "world": three are one more than set needs
/// ```
///
/// Every error says what was taken as what; a config that turns out not to exist is
/// explained the same way (``explained(_:)``).
struct PositionalArguments {
    /// The rule, as `docs/cli.md` and the commands' help say it.
    static let rule = """
        The first argument is the config's name when it can be one (a config name has \
        no '/') and the arguments after it are all the command needs; otherwise every \
        argument is for the selected config (discfg use, --config, DISCFG_CONFIG).
        """

    /// The help of a command's `[CONFIG] …` arguments: their form, then the rule.
    static func help(_ form: String) -> ArgumentHelp {
        ArgumentHelp(form, discussion: rule)
    }

    let arguments: [String]
    let selected: ConfigSelection?
    /// The command, for messages.
    var command = CommandLineLayout.runningCommandName

    init(arguments: [String], selected: ConfigSelection?) {
        self.arguments = arguments
        self.selected = selected
    }

    /// What the arguments were read as.
    struct Reading: Sendable {
        let config: ConfigName
        /// The arguments that are the command's own, after the config.
        let own: [String]
        /// Whether the first argument named the config (else it is the selected one).
        let configNamed: Bool
        /// The names of the command's own arguments, such as KEY and VALUE.
        let names: [String]
        /// Where a selected config was chosen.
        let selectedFrom: String?

        /// `"greeting" as the config, "hello" as the key and "world" as the value`.
        var description: String {
            PositionalArguments.describe(config: configNamed ? config : nil, own: own, names: names)
        }
    }

    /// The last reading of this process, to explain a config that does not exist.
    private static let lastReading = Mutex<Reading?>(nil)

    /// `[CONFIG] KEY [VALUE]` (`set`, `patch`, `schema set`): the value is one of the
    /// arguments the command needs unless `valueElsewhere` (given with `-d`), or, with
    /// no config selected (when KEY VALUE could not be read anyway), unless
    /// `standardInputMayGiveValue` and standard input is a pipe or a file.
    func configKeyValue(names: [String] = ["KEY", "VALUE"], valueElsewhere: Bool = false, standardInputMayGiveValue: Bool = false) throws -> (ConfigName, String, String?) {
        let piped = selected == nil && standardInputMayGiveValue && ValueInput.standardInputHasData
        let reading = try read(names, needed: valueElsewhere || piped ? 1 : 2, minimum: 1)
        return (reading.config, reading.own[0], reading.own.count > 1 ? reading.own[1] : nil)
    }

    /// `[CONFIG] TARGET`: `what` names the target (KEY, PREFIX, FILE).
    func configAndTarget(what: String) throws -> (ConfigName, String) {
        let reading = try read([what], needed: 1, minimum: 1)
        return (reading.config, reading.own[0])
    }

    /// `[CONFIG] [TARGET]`: with no target, the whole config.
    func configAndOptionalTarget(what: String) throws -> (ConfigName, String?) {
        let reading = try read([what], needed: 0, minimum: 0)
        return (reading.config, reading.own.first)
    }

    /// `[CONFIG]`: the named config or the selected one.
    func configOnly() throws -> ConfigName {
        try read([], needed: 0, minimum: 0).config
    }

    /// Reads `[CONFIG] names…`, of which the command needs `needed` to take a first
    /// argument as the config and cannot do without `minimum`.
    private func read(_ names: [String], needed: Int, minimum: Int) throws -> Reading {
        let form = usageForm(names, minimum: minimum)
        if let first = arguments.first, let config = try? ConfigName(first), arguments.count - 1 >= needed {
            let own = Array(arguments.dropFirst())
            let reading = Reading(config: config, own: own, configNamed: true, names: names, selectedFrom: nil)
            guard own.count <= names.count else {
                let leftOver = own.dropFirst(names.count).map { "\"\($0)\"" }
                throw usage("too many arguments for \(form): read \(reading.description), and \(Self.list(leftOver)) \(leftOver.count == 1 ? "is" : "are") left over; quote an argument that has spaces")
            }
            return remember(reading)
        }
        guard arguments.count <= names.count else {
            let first = arguments[0]
            let why = "\"\(first)\" is not a config name (\(Self.reason(first)))"
            if names.isEmpty { throw usage("\(command) takes only a config name, and \(why)", field: "config") }
            throw usage("too many arguments for \(form): \(why), so it was read as the \(names[0].lowercased()); quote an argument that has spaces")
        }
        guard arguments.count >= minimum else {
            throw usage("no \(names[arguments.count]) given: \(form)", field: names[arguments.count].lowercased())
        }
        let reading = { (config: ConfigName) in
            Reading(config: config, own: arguments, configNamed: false, names: names, selectedFrom: selected?.source)
        }
        guard let selected else {
            var message = "no config selected: name one (\(form)), pass --config NAME, or run 'discfg use NAME'"
            if !arguments.isEmpty {
                message += "; read \(Self.describe(config: nil, own: arguments, names: names))"
            }
            if let first = arguments.first, (try? ConfigName(first)) != nil, needed > 0 {
                let rest = names.prefix(needed).joined(separator: " ")
                message += " (to name config \"\(first)\", follow it with \(rest))"
            }
            throw DiscfgError(.invalidArgument, message, field: "config")
        }
        return remember(reading(selected.name))
    }

    private func remember(_ reading: Reading) -> Reading {
        Self.lastReading.withLock { $0 = reading }
        return reading
    }

    /// `discfg set [CONFIG] KEY [VALUE]`.
    private func usageForm(_ names: [String], minimum: Int) -> String {
        let own = names.enumerated().map { $0.offset < minimum ? $0.element : "[\($0.element)]" }
        return ([command, "[CONFIG]"] + own).joined(separator: " ")
    }

    /// Why `argument` cannot be a config name.
    private static func reason(_ argument: String) -> String {
        if argument.contains("/") { return "it contains \"/\"" }
        do {
            _ = try ConfigName(argument)
            return "it is one"
        } catch let error as DiscfgError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    /// `"greeting" as the config, "hello" as the key and "world" as the value`.
    static func describe(config: ConfigName?, own: [String], names: [String]) -> String {
        var parts = config.map { ["\"\($0)\" as the config"] } ?? []
        parts += zip(own, names).map { "\"\($0)\" as the \($1.lowercased())" }
        return list(parts)
    }

    /// `a`, `a and b`, `a, b and c`.
    static func list(_ parts: [String]) -> String {
        guard parts.count > 1 else { return parts.first ?? "" }
        return parts.dropLast().joined(separator: ", ") + " and " + parts.last!
    }

    /// `error`, with what the arguments were read as when it says a config does not
    /// exist: the config may have been meant as a key or prefix, or as another config.
    static func explained(_ error: DiscfgError) -> DiscfgError {
        guard error.code == .configNotFound, let reading = lastReading.withLock({ $0 }) else { return error }
        var error = error
        var message = error.message + "; read \(reading.description)"
        if let source = reading.selectedFrom {
            message += " in the selected config (from \(source))"
        } else if reading.own.count < reading.names.count, let name = reading.names.first {
            message += " (a \(name.lowercased()) is written with a '/': /\(reading.config))"
        }
        error.message = message
        return error
    }
}
