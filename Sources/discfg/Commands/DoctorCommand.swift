import ArgumentParser
import DiscfgCore
import Foundation

/// `discfg doctor`: why doesn't it work here?
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the store, credentials, keys and config; say how to fix each.",
        usage: "discfg doctor [<options>]",
        discussion: """
        Checks what the other commands would use, chosen the same way \
        (--store, DISCFG_STORE, --config, DISCFG_CONFIG, .discfg), and prints \
        one line a check: ok, warn or fail, with a fix for each problem. It \
        reads and never writes: a missing store file, table or config is \
        reported, not created.

        What it checks:
          sqlite:   the file and its folder (exists, readable, writable,
                    modes), its schema version and journal mode
          dynamodb: endpoint and region, where the AWS credentials came
                    from, the table (ACTIVE, indexes, TTL, stream), reads
                    with your rights, your clock against AWS's
          http(s):  the server's /healthz, whether it wants a token and
                    takes yours, its clock
          all:      the selected config (and where it was chosen), the
                    key files its configs name (owner, mode 600)

        Each network step gives up after --timeout seconds (default 3), \
        so a dead endpoint is named at once.

        Examples:
          discfg doctor
          discfg doctor --store dynamodb://eu-west-1/discfg-prod
          discfg doctor -f json | jq '.findings[] | select(.status != "ok")'

        EXIT CODES:
          0  nothing blocks use (warnings may remain)
          1  at least one check failed
          2  bad usage
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Seconds each network step may take, 1-60. Default: 3.", valueName: "seconds"),
            transform: { Int(try Self.timeoutSeconds.named("--timeout").parse($0)) })
    var timeout: Int = 3

    static let timeoutSeconds = NumberField("timeout", 1...60)

    func run() async throws {
        try await global.run("doctor") { output in
            var doctor = Doctor(global: global, output: output, timeout: .seconds(timeout))
            await doctor.examine()
            let report = DoctorReport(findings: doctor.findings)
            switch output.format {
            case .json: output.raw(report.json)
            case .human: output.raw(Data(report.text.utf8))
            default: break
            }
            if report.status == .fail { throw ExitCode(ExitStatus.error) }
        }
    }
}
