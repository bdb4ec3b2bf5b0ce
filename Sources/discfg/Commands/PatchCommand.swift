import ArgumentParser
import DiscfgCore
import DiscfgJSON
import DiscfgWire
import Foundation

struct PatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patch",
        abstract: "Change part of a key's JSON value.",
        usage: "discfg patch [<options>] [<config>] <key> [<patch>]",
        discussion: """
        The patch is a JSON merge patch (RFC 7386) unless --json-patch says it is \
        a JSON patch (RFC 6902). It comes from the argument, from a file (-d FILE, \
        '-d -' for standard input), or from standard input when it is piped. It is \
        applied inside the store's change, so two patches of one key never lose \
        each other's changes; the key keeps its content type and TTL.

        A merge patch replaces the members it names, removes those it sets to \
        null, and merges objects. A JSON patch is a list of operations (add, \
        remove, replace, move, copy, test) applied in order, all or nothing: a \
        failed test, a path that does not exist, or a value that is not JSON \
        exits 4 and changes nothing. The key must exist (exit 3 otherwise), and \
        the result must meet the key's schema (exit 2 otherwise).

        Examples:
          discfg patch app/settings '{"db": {"port": 5433}}'
          discfg patch app/settings '{"debug": null}'  # remove a member
          discfg patch app/settings --json-patch -d ops.json
          discfg patch app/settings --if-version 3 -d change.json
          echo '[{"op": "test", "path": "/db/port", "value": 5432},
                 {"op": "replace", "path": "/db/port", "value": 5433}]' |
            discfg patch app/settings --json-patch

        \(ExitStatus.help)
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var reason: ChangeOptions

    @OptionGroup var condition: ConditionOptions

    @Flag(name: .customLong("json-patch"), help: "The patch is a JSON patch (RFC 6902), not a merge patch (RFC 7386).")
    var jsonPatch = false

    @Option(name: [.customShort("d"), .customLong("data")], help: ArgumentHelp("Read the patch from FILE ('-' for standard input).", valueName: "file"))
    var dataFile: String?

    @Argument(help: PositionalArguments.help("[CONFIG] KEY [PATCH]"), completion: ShellCompletion.configOrKey) var arguments: [String] = []

    func run() async throws {
        try await reason.attributed {
            try await global.run("patch") { output in
                let (config, rawKey, argument) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configKeyValue(names: ["KEY", "PATCH"], valueElsewhere: dataFile != nil, standardInputMayGiveValue: true)
                let key = try Key(rawKey)
                let patch = try readPatch(argument)
                let change = try await global.openStore().patch(key, patch, in: config, conditions: conditions())
                output.emit(Envelope(action: "patch", config: config, change: change)) {
                    let item = change.item!
                    return "patched \(key) = \(Show.preview(item.value, limit: 60)) (version \(item.version), revision \(change.revision))"
                }
            }
        }
    }

    /// The conditions, as `set` takes them; a patched key exists, so never "absent".
    private func conditions() throws -> [Condition] {
        let conditions = try condition.conditions()
        if conditions.contains(.version(0)) {
            throw usage("a patch changes a key that exists, so it cannot be conditional on the key being absent (--if-absent, --if-version 0)", field: "--if-absent")
        }
        return conditions
    }

    private func readPatch(_ argument: String?) throws -> ValuePatch {
        let data = try SetCommand.readValue(argument, dataFile: dataFile, limit: Limits.maxValueBytes, what: "patch")
        let body: JSONValue
        do {
            body = try JSONParser.parse(Array(data))
        } catch {
            throw usage("the patch (\(SetCommand.source(argument, dataFile: dataFile))) is not valid JSON: \(error)", field: "patch")
        }
        return jsonPatch ? try ValuePatch(jsonPatch: body) : .merge(body)
    }
}
