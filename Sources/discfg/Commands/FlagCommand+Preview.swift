import ArgumentParser
import DiscfgCore
import DiscfgFlags
import DiscfgJSON
import Foundation

extension FlagCommand {
    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Who gets what: evaluate a flag over a sample of contexts and count the answers.",
            usage: "discfg flag preview [<options>] [<config>] <flag> --contexts <file>",
            discussion: """
            FILE holds evaluation contexts, as a JSON array of objects or as JSON \
            lines (one object a line; blank lines are skipped); '-' reads standard \
            input. Prints how many contexts get each variant (the caller's default \
            counted apart), and how many for each reason and error code. Nothing is \
            written.

            Examples:
              discfg flag preview app new-ui --contexts users.jsonl
              discfg flag preview app new-ui --contexts sample.json -f json
            """
        )

        /// The largest contexts file read.
        static let maxFileBytes = 64 << 20

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

        @Option(name: .long, help: ArgumentHelp("A JSON array or JSON lines of evaluation contexts ('-' for standard input).", valueName: "file"))
        var contexts: String

        @Argument(help: PositionalArguments.help("[CONFIG] FLAG"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await global.run("flag-preview") { output in
                let (config, key) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndTarget(what: "FLAG")
                let source = contexts == "-" ? "standard input" : contexts
                let sample = try Self.contexts(ValueInput.readFile(contexts, field: "contexts", limit: Self.maxFileBytes), source: source)
                let (catalog, revision) = try await FlagCommand.catalog(global, config)
                let entry = try FlagCommand.entry(key, in: catalog, config: config)
                let evaluator = FlagEvaluator()
                var variants: [String: Int] = [:], reasons: [String: Int] = [:], errors: [String: Int] = [:]
                for context in sample {
                    let answer = evaluator.evaluate(key, in: catalog, context: context)
                    variants[answer.variant ?? Self.callersDefault, default: 0] += 1
                    reasons[answer.reason.rawValue, default: 0] += 1
                    if let code = answer.errorCode { errors[code.rawValue, default: 0] += 1 }
                }
                // Variants in the flag's own order, then the caller's default.
                let order = entry.flag.variants.keys + [Self.callersDefault]
                let counted = order.filter { variants[$0] != nil }.map { ($0, variants[$0]!) }
                func object(_ pairs: [(String, Int)]) -> JSONValue {
                    .object(JSONObject(pairs.map { ($0.0, JSONValue.number(JSONNumber($0.1))) }))
                }
                let document = JSONValue.object(JSONObject([
                    ("action", .string("flag-preview")), ("config", .string(config.rawValue)), ("revision", .number(JSONNumber(Int(revision.rawValue)))),
                    ("key", .string(key)), ("contexts", .number(JSONNumber(sample.count))),
                    ("variants", object(counted)), ("reasons", object(reasons.sorted { $0.key < $1.key })), ("errors", object(errors.sorted { $0.key < $1.key })),
                ]))
                FlagCommand.emit(output, document) {
                    func share(_ n: Int) -> String { sample.isEmpty ? "-" : String(format: "%.1f%%", Double(n) * 100 / Double(sample.count)) }
                    let value: (String) -> String = { name in entry.flag.variants[name].map(FlagCommand.text) ?? "" }
                    var text = Show.table(["VARIANT", "CONTEXTS", "SHARE", "VALUE"], counted.map { [$0.0, String($0.1), share($0.1), value($0.0)] })
                    text += "\n\n" + Show.table(["REASON", "CONTEXTS"], reasons.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] })
                    if !errors.isEmpty {
                        text += "\n\n" + Show.table(["ERROR", "CONTEXTS"], errors.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] })
                    }
                    return text + "\n\n\(sample.count) context\(sample.count == 1 ? "" : "s"), flag \"\(key)\" of \(entry.setName) at revision \(revision.rawValue)"
                }
            }
        }

        /// How the count of answers with no variant (the caller's default) is named.
        static let callersDefault = "(caller's default)"

        /// The contexts in `data`: a JSON array of objects, or JSON lines of objects.
        static func contexts(_ data: Data, source: String) throws -> [JSONObject] {
            let bytes = Array(data)
            guard let first = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
                throw usage("\(source) holds no contexts; give a JSON array or JSON lines of context objects", field: "contexts")
            }
            if first == UInt8(ascii: "[") {
                let value: JSONValue
                do { value = try JSONParser.parse(bytes) } catch { throw usage("\(source) is not JSON: \(error)", field: "contexts") }
                guard case .array(let items) = value else { throw usage("\(source) is not a JSON array of contexts", field: "contexts") }
                return try items.enumerated().map { index, item in
                    guard case .object(let object) = item else { throw usage("\(source): context \(index + 1) of the array is not a JSON object", field: "contexts") }
                    return object
                }
            }
            var sample: [JSONObject] = []
            for (number, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
                guard line.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { continue }
                let value: JSONValue
                do { value = try JSONParser.parse(Array(line)) } catch { throw usage("\(source) line \(number + 1) is not JSON: \(error)", field: "contexts") }
                guard case .object(let object) = value else { throw usage("\(source) line \(number + 1) is not a JSON object", field: "contexts") }
                sample.append(object)
            }
            return sample
        }
    }
}
