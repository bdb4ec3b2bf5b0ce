import ArgumentParser
import DiscfgCore
import DiscfgFlags
import DiscfgJSON
import Foundation

extension FlagCommand {
    struct Evaluate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "eval",
            abstract: "Evaluate a flag for an evaluation context, as flagd and OFREP answer it.",
            usage: "discfg flag eval [<options>] [<config>] <flag> [<context>]",
            discussion: """
            CONTEXT is a JSON object of context values (targetingKey, plan, email, \
            ...), as an argument or a file with -d ('-' for standard input); none \
            means {}. Prints the value (as the flag set writes it: 10.0 stays 10.0), \
            the variant, the reason (STATIC, TARGETING_MATCH, DEFAULT, DISABLED, \
            ERROR), the error code and message if any, and which part of the \
            targeting answered (for a rule {"if": [...]}, the branch). Exit 3 for a \
            flag the config does not define, 1 for any other evaluation error \
            (PARSE_ERROR, GENERAL, INVALID_CONTEXT), 2 for a context that is not a \
            JSON object.

            Examples:
              discfg flag eval app new-ui '{"targetingKey": "u1", "plan": "pro"}'
              discfg flag eval app new-ui -d context.json -f json
              discfg flag eval app dark-mode
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

        @Option(name: [.customShort("d"), .customLong("data")], help: ArgumentHelp("Read the evaluation context from this file ('-' for standard input).", valueName: "file"))
        var dataFile: String?

        @Argument(help: PositionalArguments.help("[CONFIG] FLAG [CONTEXT]"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await global.run("flag-eval") { output in
                let reading = PositionalArguments(arguments: arguments, selected: try global.selectedConfig())
                let (config, key, contextText) = try reading.configKeyValue(names: ["FLAG", "CONTEXT"], valueElsewhere: true)
                let context: JSONObject
                switch (contextText, dataFile) {
                case (.some, .some): throw usage("give the context as an argument or with -d, not both", field: "context")
                case (let text?, nil): context = try FlagCommand.context(Data(text.utf8), source: "the context argument")
                case (nil, let file?):
                    context = try FlagCommand.context(ValueInput.readFile(file, field: "context", limit: Limits.maxValueBytes), source: file == "-" ? "standard input" : file)
                case (nil, nil): context = JSONObject()
                }
                let (catalog, revision) = try await FlagCommand.catalog(global, config)
                let entry = try FlagCommand.entry(key, in: catalog, config: config)
                let evaluator = FlagEvaluator()
                let answer = evaluator.evaluate(key, in: catalog, context: context)
                let branch = answer.reason == .targetingMatch || answer.reason == .defaultValue ? evaluator.branch(of: key, in: catalog, context: context) : nil
                let rule = Self.rule(answer, branch: branch, hasTargeting: entry.flag.targeting != nil)
                var members: [(key: String, value: JSONValue)] = [
                    ("action", .string("flag-eval")), ("config", .string(config.rawValue)), ("revision", .number(JSONNumber(Int(revision.rawValue)))),
                    ("key", .string(key)), ("set", .string(entry.setName)),
                ]
                if let value = answer.value { members.append(("value", value)) }
                if let variant = answer.variant { members.append(("variant", .string(variant))) }
                members.append(("reason", .string(answer.reason.rawValue)))
                if let code = answer.errorCode { members.append(("errorCode", .string(code.rawValue))) }
                if let message = answer.errorMessage { members.append(("errorDetails", .string(message))) }
                if let rule { members.append(("rule", .string(rule))) }
                if !answer.metadata.isEmpty { members.append(("metadata", .object(answer.metadata))) }
                FlagCommand.emit(output, .object(JSONObject(members))) {
                    var lines = [
                        "value:   \(answer.value.map(FlagCommand.text) ?? "(the caller's default)")",
                        "variant: \(answer.variant ?? "-")",
                        "reason:  \(answer.reason.rawValue)",
                    ]
                    if let code = answer.errorCode { lines.append("error:   \(code.rawValue): \(answer.errorMessage ?? "")") }
                    if let rule { lines.append("rule:    \(rule)") }
                    lines.append("set:     \(entry.setName) (revision \(revision.rawValue))")
                    return lines.joined(separator: "\n")
                }
                if let code = answer.errorCode {
                    throw ExitCode(code == .flagNotFound ? ExitStatus.notFound : ExitStatus.error)
                }
            }
        }

        /// Which part of the flag answered, in words.
        static func rule(_ answer: FlagEvaluation, branch: TargetingBranch?, hasTargeting: Bool) -> String? {
            switch answer.reason {
            case .staticValue: return "no targeting: the default variant"
            case .disabled: return "the flag is DISABLED: the caller's default"
            case .targetingMatch:
                return "\(part(branch)) gave variant \(answer.variant.map { "\"\($0)\"" } ?? "?")"
            case .defaultValue:
                if !hasTargeting { return "no targeting and no default variant: the caller's default" }
                let part = part(branch)
                return answer.variant == nil ? "\(part) gave null and there is no default variant: the caller's default" : "\(part) gave null: the default variant"
            case .error: return nil
            }
        }

        /// The part of the targeting that answered: `targeting's if branch 2`.
        static func part(_ branch: TargetingBranch?) -> String {
            switch branch {
            case .condition(let n)?: "targeting's if branch \(n)"
            case .otherwise?: "targeting's if else"
            default: "targeting"
            }
        }
    }
}
