import DiscfgTestSupport
import Foundation
import Testing

@Suite("CLI: version")
struct VersionTests {
    /// The version as `scripts/release` reads it to name its artefacts: the string in
    /// `static let version = "…"` of BuildInfo.swift.
    static func sourceVersion() throws -> String {
        let file = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/discfg/BuildInfo.swift")
        let text = try String(contentsOf: file, encoding: .utf8)
        let match = try #require(text.firstMatch(of: /static let version = "([0-9A-Za-z.+-]+)"/))
        return String(match.1)
    }

    @Test("--version and version print 'discfg vVERSION (development build)' in a build from a work tree")
    func developmentBuildLine() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let version = try Self.sourceVersion()
        let flag = try await cli.run("--version")
        #expect(flag.status == 0, "\(flag.logs)")
        #expect(flag.stdout == "discfg v\(version) (development build)\n")
        let command = try await cli.run("version")
        #expect(command.status == 0, "\(command.logs)")
        #expect(command.stdout == flag.stdout)
        #expect(try await cli.run("version", "-f", "silent").stdout.isEmpty)
    }

    @Test("version -f json gives version, commit and built, null when nothing was stamped")
    func developmentBuildJSON() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let result = try await cli.run("version", "-f", "json")
        #expect(result.status == 0, "\(result.logs)")
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any])
        #expect(Set(object.keys) == ["action", "version", "commit", "built", "message"])
        #expect(object["action"] as? String == "version")
        #expect(object["version"] as? String == (try Self.sourceVersion()))
        #expect(object["commit"] is NSNull)
        #expect(object["built"] is NSNull)
        #expect(object["message"] as? String == "discfg v\(try Self.sourceVersion()) (development build)")
    }
}
