import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Every numeric flag of the CLI, given the numbers that break unchecked code: out of
/// range it is one line naming the flag and exit 2, and nothing changes.
@Suite("CLI: every numeric flag is read within its bounds")
struct NumericFlagTests {
    struct Flag: Sendable, CustomTestStringConvertible {
        /// The command line before the flag's value.
        var arguments: [String]
        var flag: String
        var range: ClosedRange<Int64>
        /// Whether the command ends by itself when the value is good (not watch or serve).
        var ends = true
        var testDescription: String { (arguments + [flag]).joined(separator: " ") }
    }

    static let revisions: ClosedRange<Int64> = 0...Int64.max

    static let flags: [Flag] = [
        Flag(arguments: ["set", "k", "v2"], flag: "--if-version", range: revisions),
        Flag(arguments: ["set", "k", "v2"], flag: "--if-mod-revision", range: revisions),
        Flag(arguments: ["set", "k", "v2"], flag: "--ttl", range: 1...Limits.maxTTLSeconds),
        Flag(arguments: ["delete", "k"], flag: "--if-version", range: revisions),
        Flag(arguments: ["get", "k"], flag: "--revision", range: revisions),
        Flag(arguments: ["get", "k", "--path", "/a"], flag: "--revision", range: revisions),
        Flag(arguments: ["get", "/", "--document"], flag: "--revision", range: revisions),
        Flag(arguments: ["patch", "k", "{}"], flag: "--if-version", range: revisions),
        Flag(arguments: ["patch", "k", "{}"], flag: "--if-mod-revision", range: revisions),
        Flag(arguments: ["schema", "get", "k"], flag: "--revision", range: revisions),
        Flag(arguments: ["export"], flag: "--revision", range: revisions),
        Flag(arguments: ["ls", "-r"], flag: "--page-size", range: 1...1000),
        Flag(arguments: ["history", "k"], flag: "--limit", range: 1...1000),
        Flag(arguments: ["history", "k"], flag: "-n", range: 1...1000),
        Flag(arguments: ["watch"], flag: "--from-revision", range: 1...Int64.max, ends: false),
        Flag(arguments: ["serve"], flag: "--port", range: 0...65535, ends: false),
        Flag(arguments: ["serve"], flag: "--request-timeout", range: 1...3600, ends: false),
        Flag(arguments: ["serve"], flag: "--max-poll-timeout", range: 1...3600, ends: false),
        Flag(arguments: ["serve"], flag: "--max-connections", range: 1...1_000_000, ends: false),
        Flag(arguments: ["serve"], flag: "--max-watches", range: 1...1_000_000, ends: false),
        Flag(arguments: ["serve"], flag: "--stream-backlog", range: 1...1_048_576, ends: false),
        Flag(arguments: ["serve"], flag: "--write-timeout", range: 1...86_400, ends: false),
        Flag(arguments: ["serve"], flag: "--idle-timeout", range: 1...86_400, ends: false),
        Flag(arguments: ["serve", "--etcd", "127.0.0.1:0"], flag: "--etcd-quota", range: 1...Limits.maxQuotaBytes, ends: false),
        Flag(arguments: ["update"], flag: "--read-capacity", range: 1...1_000_000),
        Flag(arguments: ["update"], flag: "--write-capacity", range: 1...1_000_000),
        Flag(arguments: ["update"], flag: "--history", range: 1...999_999_999),
        Flag(arguments: ["update"], flag: "--quota", range: 1...Limits.maxQuotaBytes),
        Flag(arguments: ["exec", "--watch"], flag: "--grace", range: 1...3600),
        Flag(arguments: ["exec", "--watch"], flag: "--signal", range: 1...31),
        Flag(arguments: ["doctor"], flag: "--timeout", range: 1...60),
    ]

    static let outOfRange = ["-1", "9223372036854775808", "18446744073709551615", "18446744073709551616", "1000000000000000000000000000000", "abc", "1e3", "0x10"]

    @Test("out of range: exit 2, one line naming the flag, nothing changed", arguments: flags)
    func refused(_ flag: Flag) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "cfg")
        try await cli.run("use", "cfg")
        try await cli.run("set", "k", "original")
        var probes = Self.outOfRange
        if flag.range.lowerBound > 0 { probes.append("0") }
        if flag.range.upperBound < Int64.max { probes.append(String(flag.range.upperBound + 1)) }
        if flag.range.upperBound == Int64.max, flag.ends { probes.append("9223372036854775807") }
        for probe in probes {
            let inRange = Int64(probe).map(flag.range.contains) == true
            let result = try await cli.run(flag.arguments + [flag.flag, probe])
            #expect(!result.stderr.contains("Fatal error"), "\(flag.flag) \(probe): \(result.stderr)")
            if inRange {
                // Only the largest revision and version fit: they read nothing or fail a condition.
                #expect([0, 3, 4].contains(result.status) || (result.status == 2 && !result.stderr.contains("whole number")), "\(flag.flag) \(probe): \(result.status) \(result.stderr)")
                continue
            }
            #expect(result.status == 2, "\(flag.flag) \(probe): \(result.status) \(result.stderr)")
            let names = flag.flag == "-n" ? ["-n", "--limit"] : [flag.flag, String(flag.flag.dropFirst(2))]
            #expect(names.contains(where: result.stderr.contains), "\(flag.flag) \(probe): \(result.stderr)")
            #expect(result.stderr.hasPrefix("discfg: "), "\(flag.flag) \(probe): \(result.stderr)")
        }
        let after = try await cli.run("info", "-f", "json").envelope()
        #expect(after.revision == 1, "a refused flag changed the config")
        #expect(try await cli.run("get", "k").stdout == "original\n")
    }
}
