import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("RaisedAlarm: alarms kept per etcd member in a config's settings")
struct RaisedAlarmTests {
    @Test(arguments: [
        ("NOSPACE", RaisedAlarm.noSpace), ("NOSPACE@0", RaisedAlarm(.noSpace, member: 0)),
        ("NOSPACE@18446744073709551615", RaisedAlarm(.noSpace, member: .max)), ("NOSPACE@42", RaisedAlarm(.noSpace, member: 42)),
    ])
    func namesParseAndSpellBack(name: String, expected: RaisedAlarm) throws {
        #expect(try RaisedAlarm(named: name) == expected)
        #expect(expected.name == name)
    }

    @Test(arguments: ["NOSPACE@", "NOSPACE@-1", "NOSPACE@+1", "NOSPACE@007", "NOSPACE@1x", "NOSPACE@18446744073709551616", "NOSPACE@0@0", "NOSPACE @0"])
    func badMemberIdsAreRefused(name: String) throws {
        try expectError(.invalidArgument, field: "alarms", mentioning: ["NOSPACE"]) { try RaisedAlarm(named: name) }
    }

    @Test("an unknown alarm, with or without a member, is refused naming the alarms there are")
    func unknownAlarms() throws {
        for name in ["CORRUPT", "CORRUPT@0", "nospace", ""] {
            try expectError(.invalidArgument, field: "alarms", mentioning: ["the alarms are: NOSPACE"]) { try RaisedAlarm(named: name) }
        }
    }

    @Test("settings stored before member ids were kept read as the config's own member's alarm, and are written back as they were")
    func storedSettingsKeepTheirMeaning() throws {
        let old = try JSONDecoder().decode(ConfigSettings.self, from: Data(#"{"history": "30d", "alarms": ["NOSPACE"]}"#.utf8))
        #expect(old.alarms == [.noSpace])
        let written = try JSONSerialization.jsonObject(with: JSONEncoder().encode(old)) as? [String: Any]
        #expect(written?["alarms"] as? [String] == ["NOSPACE"])
    }

    @Test("both members' alarms are written own first, then by member id, and read back")
    func settingsRoundTrip() throws {
        let settings = ConfigSettings(alarms: [RaisedAlarm(.noSpace, member: 9), RaisedAlarm(.noSpace, member: 0), .noSpace])
        let data = try JSONEncoder().encode(settings)
        let written = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(written?["alarms"] as? [String] == ["NOSPACE", "NOSPACE@0", "NOSPACE@9"])
        #expect(try JSONDecoder().decode(ConfigSettings.self, from: data) == settings)
        let patch = try JSONDecoder().decode(ConfigSettingsPatch.self, from: Data(#"{"alarms": ["NOSPACE@0"]}"#.utf8))
        #expect(patch.alarms == [RaisedAlarm(.noSpace, member: 0)])
    }

    @Test("a patch raises and disarms relative to the alarms raised, reads them from JSON and writes them back")
    func raisesAndDisarmsApplyRelatively() throws {
        let zero = RaisedAlarm(.noSpace, member: 0), nine = RaisedAlarm(.noSpace, member: 9)
        let settings = ConfigSettings(description: "d", alarms: [.noSpace, zero])
        #expect(ConfigSettingsPatch(raiseAlarms: [nine]).applied(to: settings) == ConfigSettings(description: "d", alarms: [.noSpace, zero, nine]))
        #expect(ConfigSettingsPatch(disarmAlarms: [zero, nine]).applied(to: settings) == ConfigSettings(description: "d", alarms: [.noSpace]))
        #expect(ConfigSettingsPatch(raiseAlarms: [nine], disarmAlarms: [.noSpace]).applied(to: settings).alarms == [zero, nine])
        #expect(!ConfigSettingsPatch(disarmAlarms: []).isEmpty)
        let json = #"{"raiseAlarms": ["NOSPACE@9"], "disarmAlarms": ["NOSPACE", "NOSPACE@0"]}"#
        let patch = try JSONDecoder().decode(ConfigSettingsPatch.self, from: Data(json.utf8))
        #expect(patch == ConfigSettingsPatch(raiseAlarms: [nine], disarmAlarms: [.noSpace, zero]))
        let written = try JSONSerialization.jsonObject(with: JSONEncoder().encode(patch)) as? [String: Any]
        #expect(written?["disarmAlarms"] as? [String] == ["NOSPACE", "NOSPACE@0"])
        #expect(try JSONDecoder().decode(ConfigSettingsPatch.self, from: JSONEncoder().encode(patch)) == patch)
    }

    @Test("a patch that replaces the alarms and raises or disarms too, or raises and disarms one alarm, is refused")
    func mixedAlarmPatchesAreRefused() throws {
        for json in [#"{"alarms": [], "raiseAlarms": ["NOSPACE"]}"#, #"{"alarms": ["NOSPACE"], "disarmAlarms": []}"#] {
            try expectError(.invalidArgument, field: "alarms", mentioning: ["raiseAlarms"]) {
                try JSONDecoder().decode(ConfigSettingsPatch.self, from: Data(json.utf8))
            }
        }
        try expectError(.invalidArgument, field: "raiseAlarms", mentioning: ["NOSPACE@0"]) {
            try ConfigSettingsPatch(raiseAlarms: [RaisedAlarm(.noSpace, member: 0)], disarmAlarms: [RaisedAlarm(.noSpace, member: 0)]).checkAlarms()
        }
        try expectError(.invalidArgument, field: "raiseAlarms") {
            try JSONDecoder().decode(ConfigSettingsPatch.self, from: Data(#"{"raiseAlarms": ["NOSPACE@x"]}"#.utf8))
        }
        let nulls = try JSONDecoder().decode(ConfigSettingsPatch.self, from: Data(#"{"alarms": [], "raiseAlarms": null}"#.utf8))
        #expect(nulls == ConfigSettingsPatch(alarms: []))
    }

    @Test("any member's NOSPACE refuses a change that writes a key and a lease grant; deletes pass")
    func anyMemberRefuses() throws {
        for alarms: Set<RaisedAlarm> in [[.noSpace], [RaisedAlarm(.noSpace, member: 0)], [RaisedAlarm(.noSpace, member: 5), .noSpace]] {
            let settings = ConfigSettings(alarms: alarms)
            let app = try ConfigName("app")
            #expect(settings.isRaised(.noSpace))
            try expectError(.quotaExceeded, field: "alarms") { try settings.checkChange(app, size: 0, change: 1, writesKeys: true) }
            try expectError(.quotaExceeded, field: "alarms") { try settings.checkLeaseGrant(app) }
            try settings.checkChange(app, size: 10, change: -5, writesKeys: false)
        }
        #expect(!ConfigSettings().isRaised(.noSpace))
    }
}
