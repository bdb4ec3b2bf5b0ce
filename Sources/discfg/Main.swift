import ArgumentParser
import DiscfgCore
import Foundation

/// Runs the CLI and turns every failure into one line and a documented exit code.
@main
enum Main {
    static func main() async {
        _ = InheritedDescriptors.atStart
        // Packaged for Lambda, the binary is the custom runtime's `bootstrap`, or the agent's
        // layer's extension `discfg-agent`, which gets no arguments.
        switch CommandLine.arguments.first.map({ URL(fileURLWithPath: $0).lastPathComponent }) {
        case "bootstrap":
            Foundation.exit(await LambdaCommand.runFunction(environment: ProcessInfo.processInfo.environment))
        case AgentExtensionSettings.extensionName:
            Foundation.exit(await AgentExtension.run(environment: ProcessInfo.processInfo.environment))
        default:
            break
        }
        let layout = await CommandLineLayout.ofThisProcess()
        if let unknown = layout.unknownCommandMessage() ?? layout.secretFlagClashMessage() {
            FileHandle.standardError.write(Data("discfg: \(unknown)\nSee 'discfg --help' or 'discfg help <command>'.\n".utf8))
            Foundation.exit(ExitStatus.usage)
        }
        do {
            // Async: the shell's completion requests (---completion) read the store.
            var command = try await Discfg.asyncParseAsRoot(layout.arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            let code = Discfg.exitCode(for: error)
            if code == .success {
                // Help: the command's own options before the global ones.
                let text = Discfg.fullMessage(for: error)
                guard text.contains("\n\(HelpSections.optionsHeader)\n") else { Discfg.exit(withError: error) }
                print(HelpSections.ownOptionsFirst(text))
                Foundation.exit(ExitStatus.ok)
            }
            // Usage errors: one line naming the problem, then where to read more.
            let message = Discfg.message(for: error)
            FileHandle.standardError.write(Data("discfg: \(message)\nSee 'discfg --help' or 'discfg help <command>'.\n".utf8))
            Foundation.exit(ExitStatus.usage)
        }
    }
}

/// The exit codes every command documents.
enum ExitStatus {
    static let ok: Int32 = 0
    static let error: Int32 = 1
    static let usage: Int32 = 2
    static let notFound: Int32 = 3
    static let conditionFailed: Int32 = 4

    static let help = """
    EXIT CODES:
      0  success
      1  error (store unavailable, value too large, ...)
      2  bad usage or input (unknown flag, bad name, key, value, file),
         or a value its schema refuses; nothing was changed
      3  not found (config, key, or a --path in the value)
      4  condition failed (--if-version, --if-value, ...) or a patch that
         does not apply; nothing was changed
    """

    static func code(for error: DiscfgError) -> Int32 {
        switch error.code {
        case .invalidArgument, .compacted, .notRepresentable, .schemaViolation, .unsupportedMediaType: usage
        case .configNotFound, .keyNotFound, .pathNotFound: notFound
        case .conditionFailed, .patchFailed: conditionFailed
        default: Self.error
        }
    }
}
