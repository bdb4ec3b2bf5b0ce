import ArgumentParser
import DiscfgCore
import Foundation

struct ContextListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List the contexts; the current one is marked with *.",
        usage: "discfg context ls [-f json]",
        discussion: "EXAMPLES:\n  discfg context ls\n  discfg context ls -f json",
        aliases: ["list"]
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    func run() async throws {
        try await global.run("context ls") { output in
            let file = try ContextFile.load(from: global.contextFilePath) ?? ContextFile()
            ContextReport.emit(output, action: "context ls", name: nil, context: nil, file: file) {
                guard !file.contexts.isEmpty else { return "no contexts; 'discfg context add NAME --store URL' saves one" }
                let rows = file.contexts.keys.sorted().map { name in
                    let context = file.contexts[name]!
                    return [file.current == name ? "*" : "", name, context.store, context.config ?? "", context.tokenFile ?? ""]
                }
                return Show.table(["CURRENT", "NAME", "STORE", "CONFIG", "TOKEN FILE"], rows)
            }
        }
    }
}

struct ContextShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show the store, config, token and CA in effect here, and where each came from.",
        usage: "discfg context show [--context <name>] [-f json]",
        discussion: """
        A token is never printed: only whether one is given, and by what.

        EXAMPLES:
          discfg context show
          discfg --context prod context show -f json
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    func run() async throws {
        try await global.run("context show") { output in
            let choice = try global.chosenContext()
            let storeChoice = try global.storeContext()
            let environment = global.environment
            func set(_ name: String) -> Bool { !(environment[name] ?? "").isEmpty }
            let contextText = choice.map { "context \($0.name)" }
            var parts: [ContextReport.Part] = []
            let storeSource = global.store != nil ? "--store" : set("DISCFG_STORE") ? "DISCFG_STORE" : contextText ?? "the default"
            parts.append(.init(part: "store", value: try global.storeLocation().description, source: storeSource))
            let selection = try global.selectedConfig()
            parts.append(.init(part: "config", value: selection?.name.rawValue, source: selection?.source ?? "none selected"))
            let tokenFile = storeChoice?.context.tokenFile
            let tokenSource = global.token != nil ? "--token" : set("DISCFG_TOKEN") ? "DISCFG_TOKEN" : tokenFile.map { "token file \($0) of context \(storeChoice!.name)" }
            parts.append(.init(part: "token", value: tokenSource == nil ? nil : "(given)", source: tokenSource ?? "none"))
            let savedCA = storeChoice?.context.cacert
            let caSource = global.cacert != nil ? "--cacert" : set("DISCFG_CACERT") ? "DISCFG_CACERT" : savedCA == nil ? "the system's" : "context \(storeChoice!.name)"
            parts.append(.init(part: "cacert", value: try global.resolvedTLS().caCertificate ?? environment["DISCFG_CACERT"].flatMap { $0.isEmpty ? nil : $0 }, source: caSource))
            let file = try ContextFile.load(from: global.contextFilePath) ?? ContextFile()
            let report = ContextReport(action: "context show", context: choice?.name.rawValue, contextSource: choice?.source, file: global.contextFilePath, current: file.current, effective: parts)
            output.emitReport(report) {
                var lines = ["context  " + (choice.map { "\($0.name) (from \($0.source))" } ?? "none")]
                for part in parts {
                    lines.append(part.part.padding(toLength: 9, withPad: " ", startingAt: 0) + (part.value.map { "\($0) (from \(part.source))" } ?? part.source))
                }
                return lines.joined(separator: "\n")
            }
        }
    }
}

/// What the context commands print with `-f json`.
struct ContextReport: Encodable {
    struct Entry: Encodable {
        let name: String
        let current: Bool
        let context: StoreContext
    }

    /// One part of what a command would use, and what gave it.
    struct Part: Encodable {
        let part: String
        let value: String?
        let source: String
    }

    var action: String
    var context: String?
    var contextSource: String?
    var file: String?
    var current: String?
    var contexts: [Entry]?
    var effective: [Part]?

    /// Prints the outcome of add, use, rm or ls: the human line, or the contexts as JSON.
    static func emit(_ output: Output, action: String, name: ContextName?, context: StoreContext?, file: ContextFile, human: () -> String) {
        let entries = file.contexts.keys.sorted().map { Entry(name: $0, current: file.current == $0, context: file.contexts[$0]!) }
        output.emitReport(ContextReport(action: action, context: name?.rawValue, current: file.current, contexts: entries), human: human)
    }
}

extension Output {
    /// Prints `report` as JSON, or `human()` as text.
    func emitReport(_ report: ContextReport, human: () -> String) {
        switch format {
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            raw(((try? encoder.encode(report)) ?? Data("{}".utf8)) + Data("\n".utf8))
        case .human: raw(Data((human() + "\n").utf8))
        default: break
        }
    }
}
