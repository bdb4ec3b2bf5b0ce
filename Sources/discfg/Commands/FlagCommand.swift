import ArgumentParser
import DiscfgCore
import DiscfgFlags
import DiscfgJSON
import Foundation

/// `discfg flag`: a config's feature flags (flagd flag sets under /flags/), listed,
/// evaluated, switched off and on, and previewed over a sample of contexts.
struct FlagCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flag",
        abstract: "List, evaluate, switch and preview a config's feature flags.",
        discussion: """
        A config's feature flags are flagd flag sets, each a JSON document at a key \
        under /flags/ (/flags/web, /flags/billing); the config's flags are the union \
        of its sets, and a flag key lives in one set only. Every write under /flags/ \
        is checked: a value flagd would refuse, or a set that defines a flag another \
        set defines, is refused naming the key and the member (exit 2). See \
        docs/flags.md.

        Examples:
          discfg set app /flags/web -d web-flags.json -m "new checkout flag"
          discfg flag ls app
          discfg flag eval app new-ui '{"targetingKey": "u1", "plan": "pro"}'
          discfg flag disable app new-ui -m "checkout errors, incident 412"
          discfg flag preview app new-ui --contexts users.jsonl
        """,
        subcommands: [List.self, Evaluate.self, Enable.self, Disable.self, Preview.self]
    )

    /// The flags of `config` and the revision they were read at.
    static func catalog(_ global: GlobalOptions, _ config: ConfigName) async throws -> (FlagCatalog, Revision) {
        try await global.openStore().flags(in: config)
    }

    /// The entry of flag `key`, or one sentence saying it is not defined (exit 3).
    static func entry(_ key: String, in catalog: FlagCatalog, config: ConfigName) throws -> FlagCatalog.Entry {
        guard let entry = catalog.entries[key] else {
            let known = catalog.entries.keys.sorted()
            let listed = known.isEmpty ? "it has no flags under /flags/" : "its flags are \(known.prefix(10).joined(separator: ", "))\(known.count > 10 ? ", …" : "")"
            throw DiscfgError(.keyNotFound, "flag \"\(key)\" is not defined in config \"\(config)\" (\(listed))", field: "flag")
        }
        return entry
    }

    /// An evaluation context from JSON text: an object, else one sentence naming `source`.
    static func context(_ data: Data, source: String) throws -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(data))
        } catch {
            throw usage("\(source) is not JSON: \(error)", field: "context")
        }
        guard case .object(let object) = value else {
            throw usage("\(source) must be a JSON object of context values, such as {\"targetingKey\": \"u1\"}", field: "context")
        }
        return object
    }

    /// A value as JSON text, numbers as the flag set wrote them.
    static func text(_ value: JSONValue) -> String {
        (try? JSONSerializer.string(value, options: .init(numbersAsWritten: true))) ?? "?"
    }

    /// Prints `document` in JSON format, `human()` in human format, nothing when silent.
    static func emit(_ output: Output, _ document: JSONValue, human: () -> String) {
        switch output.format {
        case .json:
            var bytes = (try? JSONSerializer.serialize(document, options: .init(numbersAsWritten: true))) ?? []
            bytes.append(UInt8(ascii: "\n"))
            output.raw(Data(bytes))
        case .human:
            let text = human()
            output.raw(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
        default: break
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List a config's flags: state, variants, default variant, targeting and set.",
            usage: "discfg flag ls [<options>] [<config>]",
            discussion: """
            -f json prints each flag's key, state, variants (with their values as \
            written), defaultVariant, whether it has targeting, and the set it lives in.

            Examples:
              discfg flag ls app
              discfg flag ls app -f json
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

        @Argument(help: PositionalArguments.help("[CONFIG]"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await global.run("flags") { output in
                let config = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configOnly()
                let (catalog, revision) = try await FlagCommand.catalog(global, config)
                let entries = catalog.entries.values.sorted { $0.flag.key < $1.flag.key }
                let flags: [JSONValue] = entries.map { entry in
                    .object(JSONObject([
                        ("key", .string(entry.flag.key)), ("state", .string(entry.flag.state.rawValue)),
                        ("variants", .object(entry.flag.variants)),
                        ("defaultVariant", entry.flag.defaultVariant.map(JSONValue.string) ?? .null),
                        ("targeting", .bool(entry.flag.targeting != nil)), ("set", .string(entry.setName)),
                    ]))
                }
                let document = JSONValue.object(JSONObject([
                    ("action", .string("flags")), ("config", .string(config.rawValue)),
                    ("revision", .number(JSONNumber(Int(revision.rawValue)))), ("flags", .array(flags)),
                ]))
                FlagCommand.emit(output, document) {
                    guard !entries.isEmpty else { return "no flags in config \(config); put a flagd flag set at a key under /flags/" }
                    let rows = entries.map { entry in
                        [
                            entry.flag.key, entry.flag.state.rawValue,
                            entry.flag.variants.map { "\($0.key)=\(Show.preview(Data(FlagCommand.text($0.value).utf8), limit: 24))" }.joined(separator: " "),
                            entry.flag.defaultVariant ?? "-", entry.flag.targeting == nil ? "no" : "yes", entry.setName,
                        ]
                    }
                    return Show.table(["FLAG", "STATE", "VARIANTS", "DEFAULT", "TARGETING", "SET"], rows)
                }
            }
        }
    }
}
