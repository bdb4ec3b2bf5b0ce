import ArgumentParser
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSecrets
import DiscfgWire
import Foundation

struct VersionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print discfg's version, and the commit and time a release was built from.",
        usage: "discfg version [<options>]",
        discussion: """
        Prints what 'discfg --version' prints. A release (scripts/release) names the \
        commit and the time it was built from; a build from a work tree says so:
          discfg v0.1.0 (commit 0123456789ab, built 2026-11-26T06:00:00Z)
          discfg v0.1.0 (development build)

        With -f json: action, version, commit (the full hash), built and message; \
        commit and built are null in a development build.
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    func run() async throws {
        try await global.run("version") { output in
            guard output.format == .json else {
                var envelope = Envelope(action: "version")
                envelope.message = BuildInfo.line
                output.emit(envelope) { BuildInfo.line }
                return
            }
            output.raw(try VersionDocument().json())
        }
    }
}
