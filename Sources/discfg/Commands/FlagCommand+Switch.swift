import ArgumentParser
import DiscfgCore
import DiscfgFlags
import DiscfgJSON
import Foundation

extension FlagCommand {
    /// The kill switch: a flag's `state` rewritten in the set that defines it, as one
    /// change conditioned on the set's revision, every other byte of the set kept.
    struct Switch {
        let state: DiscfgFlags.Flag.State
        let global: GlobalOptions
        let reason: ChangeOptions
        let arguments: [String]

        static func discussion(_ verb: String, _ state: DiscfgFlags.Flag.State) -> String {
            """
            Rewrites the flag's "state" to "\(state.rawValue)" in the flag set that \
            defines it, as one change conditioned on the set's revision (so a \
            change made meanwhile is not lost: exit 4, run it again), keeping every \
            other byte of the set as written. It takes effect at the next agent \
            refresh or watch event. A flag already \(state.rawValue) is left alone.

            Examples:
              discfg flag \(verb) app new-ui -m "checkout errors, incident 412"
              discfg flag \(verb) new-ui -m "why"      # the config chosen by 'discfg use'
            """
        }

        func run() async throws {
            try await reason.attributed {
                try await global.run(state == .enabled ? "flag-enable" : "flag-disable") { output in
                    let (config, key) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndTarget(what: "FLAG")
                    let store = try global.openStore()
                    let (catalog, _) = try await store.flags(in: config)
                    let entry = try FlagCommand.entry(key, in: catalog, config: config)
                    let setKey = try Key(entry.setName)
                    guard let item = try await store.get(setKey, in: config) else {
                        throw DiscfgError(.conditionFailed, "flag set \(entry.setName) was deleted while it was read; nothing changed", field: "flag")
                    }
                    if try ConfigFlags.flagSet(item).flags[key]?.state == state {
                        output.note("flag \"\(key)\" is already \(state.rawValue) in \(entry.setName); nothing changed")
                        FlagCommand.emit(output, .object(JSONObject([
                            ("action", .string(state == .enabled ? "flag-enable" : "flag-disable")), ("config", .string(config.rawValue)),
                            ("key", .string(key)), ("set", .string(entry.setName)), ("state", .string(state.rawValue)), ("changed", .bool(false)),
                        ]))) { "" }
                        return
                    }
                    let edited = try FlagStateEdit.setting(state, of: key, in: item.value)
                    let options = SetOptions(conditions: [.modRevision(item.modRevision)], contentType: item.contentType)
                    let event = try await store.set(setKey, to: edited, in: config, options: options)
                    FlagCommand.emit(output, .object(JSONObject([
                        ("action", .string(state == .enabled ? "flag-enable" : "flag-disable")), ("config", .string(config.rawValue)),
                        ("key", .string(key)), ("set", .string(entry.setName)), ("state", .string(state.rawValue)), ("changed", .bool(true)),
                        ("revision", .number(JSONNumber(Int(event.revision.rawValue)))),
                    ]))) {
                        "flag \"\(key)\" \(state == .enabled ? "enabled" : "disabled") in \(entry.setName) (revision \(event.revision.rawValue))"
                    }
                }
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn a flag on: its state ENABLED, in one change.",
            usage: "discfg flag enable [<options>] [<config>] <flag> [-m <text>]",
            discussion: Switch.discussion("enable", .enabled)
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions
        @Argument(help: PositionalArguments.help("[CONFIG] FLAG"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await Switch(state: .enabled, global: global, reason: reason, arguments: arguments).run()
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn a flag off (a kill switch): its state DISABLED, in one change.",
            usage: "discfg flag disable [<options>] [<config>] <flag> [-m <text>]",
            discussion: Switch.discussion("disable", .disabled)
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions
        @Argument(help: PositionalArguments.help("[CONFIG] FLAG"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await Switch(state: .disabled, global: global, reason: reason, arguments: arguments).run()
        }
    }
}
