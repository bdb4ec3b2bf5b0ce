import DiscfgTestSupport
import Foundation
import Testing

/// A config's alarms through the CLI: raised and disarmed with `update`, shown by `info`,
/// and refusing writes of keys with exit 1 in between.
@Suite("CLI: config alarms")
struct AlarmCommandTests {
    @Test("update '{\"alarms\": [\"NOSPACE\"]}': set exits 1 naming the alarm and how to disarm it, del passes, info shows it, member 0's as NOSPACE@0; [] disarms; an unknown alarm is a usage error")
    func alarms() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "app").status == 0)
        #expect(try await cli.run("set", "app", "/a", "1").status == 0)
        let raised = try await cli.run("update", "app", #"{"alarms": ["NOSPACE"]}"#)
        #expect(raised.status == 0, "\(raised.stderr)")
        #expect(raised.stdout.contains("alarms: NOSPACE"), "\(raised.stdout)")
        let refused = try await cli.run("set", "app", "/b", "2")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("NOSPACE alarm raised") && refused.stderr.contains(#"'{"alarms": []}'"#), "\(refused.stderr)")
        #expect(try await cli.run("info", "app").stdout.contains("alarms         NOSPACE raised"))
        #expect(try await cli.run("delete", "app", "/a").status == 0)
        let both = try await cli.run("update", "app", #"{"alarms": ["NOSPACE@0", "NOSPACE"]}"#)
        #expect(both.stdout.contains("alarms: NOSPACE, NOSPACE@0"), "\(both.stdout)")
        #expect(try await cli.run("info", "app").stdout.contains("alarms         NOSPACE, NOSPACE@0 raised"))
        let zero = try await cli.run("update", "app", #"{"alarms": ["NOSPACE@0"]}"#)
        #expect(zero.stdout.contains("alarms: NOSPACE@0)"), "\(zero.stdout)")
        #expect(try await cli.run("set", "app", "/b", "2").status == 1, "member 0's NOSPACE alone refuses writes")
        let badMember = try await cli.run("update", "app", #"{"alarms": ["NOSPACE@x"]}"#)
        #expect(badMember.status == 2 && badMember.stderr.contains("NOSPACE@0"), "\(badMember.stderr)")
        let unknown = try await cli.run("update", "app", #"{"alarms": ["CORRUPT"]}"#)
        #expect(unknown.status == 2 && unknown.stderr.contains("the alarms are: NOSPACE"), "\(unknown.stderr)")
        let disarmed = try await cli.run("update", "app", #"{"alarms": []}"#)
        #expect(disarmed.stdout.contains("alarms: none"), "\(disarmed.stdout)")
        #expect(try await cli.run("set", "app", "/b", "2").status == 0)
        #expect(!(try await cli.run("info", "app").stdout.contains("alarms")))
    }

    @Test("update with raiseAlarms and disarmAlarms changes the alarms it names and keeps the others; beside alarms it is a usage error")
    func raisesAndDisarms() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "app").status == 0)
        let first = try await cli.run("update", "app", #"{"raiseAlarms": ["NOSPACE@0"]}"#)
        #expect(first.status == 0 && first.stdout.contains("alarms: NOSPACE@0)"), "\(first.stdout)\(first.stderr)")
        let second = try await cli.run("update", "app", #"{"raiseAlarms": ["NOSPACE@7"]}"#)
        #expect(second.stdout.contains("alarms: NOSPACE@0, NOSPACE@7)"), "\(second.stdout)")
        #expect(try await cli.run("set", "app", "/a", "1").status == 1)
        let mixed = try await cli.run("update", "app", #"{"alarms": [], "disarmAlarms": ["NOSPACE@0"]}"#)
        #expect(mixed.status == 2 && mixed.stderr.contains("raiseAlarms, disarmAlarms"), "\(mixed.stderr)")
        let one = try await cli.run("update", "app", #"{"disarmAlarms": ["NOSPACE@0"]}"#)
        #expect(one.stdout.contains("alarms: NOSPACE@7)"), "\(one.stdout)")
        let last = try await cli.run("update", "app", #"{"disarmAlarms": ["NOSPACE@7", "NOSPACE"]}"#)
        #expect(last.stdout.contains("alarms: none"), "\(last.stdout)")
        #expect(try await cli.run("set", "app", "/a", "1").status == 0)
    }
}
