import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("HistoryRetention")
struct HistoryRetentionTests {
    @Test(arguments: [
        ("30d", HistoryRetention.days(30)), ("1d", .days(1)), ("36500d", .days(36500)),
        ("500", .last(500)), ("1", .last(1)), ("999999999", .last(999_999_999)), ("forever", .forever),
    ])
    func validTextParses(text: String, expected: HistoryRetention) throws {
        #expect(try HistoryRetention(parsing: text) == expected)
    }

    /// Exactly as the API documents it: the CLI, not the parser, forgives case and blanks.
    @Test(arguments: ["", "0", "-1", "0d", "-3d", "36501d", "d", "1.5d", "30 days", "never", "1e3", "10h", " 7D ", "FOREVER", "+5", "1000000000"])
    func invalidTextIsRejectedNamingTheForms(text: String) throws {
        try expectError(.invalidArgument, field: "history", mentioning: ["Nd", "forever"]) { try HistoryRetention(parsing: text) }
    }

    @Test(arguments: [HistoryRetention.days(30), .last(500), .forever])
    func textRoundTrips(retention: HistoryRetention) throws {
        #expect(try HistoryRetention(parsing: retention.text) == retention)
        let json = try JSONEncoder().encode(ConfigSettings(history: retention))
        #expect(try JSONDecoder().decode(ConfigSettings.self, from: json).history == retention)
    }

    @Test func defaultIsThirtyDays() throws {
        #expect(HistoryRetention.default == .days(30))
        #expect(try JSONDecoder().decode(ConfigSettings.self, from: Data("{}".utf8)) == ConfigSettings(history: .days(30)))
    }

    @Test func daysGiveACutoffAndCountsGiveARevision() {
        let now = Date(milliseconds: 10 * 86_400_000)
        #expect(HistoryRetention.days(2).cutoff(now: now) == Date(milliseconds: 8 * 86_400_000))
        #expect(HistoryRetention.last(3).cutoff(now: now) == nil)
        #expect(HistoryRetention.last(3).lastDroppable(revision: 10) == 7)
        #expect(HistoryRetention.last(3).lastDroppable(revision: 3) == nil)
        #expect(HistoryRetention.forever.lastDroppable(revision: 100) == nil)
        #expect(HistoryRetention.forever.cutoff(now: now) == nil)
    }

    @Test func patchChangesOnlyWhatItNames() {
        let settings = ConfigSettings(history: .days(7), description: "d")
        #expect(ConfigSettingsPatch().applied(to: settings) == settings)
        #expect(ConfigSettingsPatch().isEmpty)
        #expect(ConfigSettingsPatch(history: .forever).applied(to: settings) == ConfigSettings(history: .forever, description: "d"))
        #expect(ConfigSettingsPatch(description: "").applied(to: settings) == ConfigSettings(history: .days(7), description: nil))
    }
}
