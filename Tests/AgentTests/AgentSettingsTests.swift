import DiscfgAgent
import DiscfgCore
import Testing

/// The one reading of an agent's interval and port, for `--interval`/`--port` and
/// `DISCFG_AGENT_INTERVAL`/`DISCFG_AGENT_PORT` alike.
@Suite("Agent: settings")
struct AgentSettingsTests {
    @Test("an interval in seconds, ms, s, m or h, from 1s to 24h", arguments: [
        ("15", Duration.seconds(15)), ("15s", .seconds(15)), ("1500ms", .milliseconds(1500)), ("1000ms", .seconds(1)), ("2m", .seconds(120)),
        ("1h", .seconds(3600)), ("24h", .seconds(86_400)), ("86400", .seconds(86_400)), (" 5S ", .seconds(5)), ("1440m", .seconds(86_400)),
    ])
    func intervals(_ text: String, _ expected: Duration) throws {
        #expect(try AgentSettings.interval(text, field: "X") == expected)
    }

    @Test("an interval out of bounds or not a duration names the field and the bounds", arguments: [
        "0", "-1", "999ms", "0s", "86401", "86400001ms", "1441m", "25h", "9223372036854775807", "9223372036854775808", "18446744073709551616",
        "9223372036854775807h", "soon", "1.5s", "1e3", "s", "ms", "", "15 s", "+15", "15sec", "１５",
    ])
    func badIntervals(_ text: String) {
        for field in ["--interval", "DISCFG_AGENT_INTERVAL"] {
            let error = #expect(throws: DiscfgError.self) { try AgentSettings.interval(text, field: field) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.field == field)
            #expect(error?.message.hasPrefix("\(field) must be a duration from 1s to 24h") == true, "\(error?.message ?? "")")
        }
    }

    @Test("a port from 1 to 65535; 0 only where the caller announces the port it bound")
    func ports() throws {
        #expect(try AgentSettings.port("2773", field: "--port", allowsAny: true) == 2773)
        #expect(try AgentSettings.port("0", field: "--port", allowsAny: true) == 0)
        #expect(try AgentSettings.port("65535", field: "P", allowsAny: false) == 65535)
        for text in ["0", "-1", "65536", "9223372036854775808", "18446744073709551616", "abc", "", " 80", "0x50"] {
            let error = #expect(throws: DiscfgError.self) { try AgentSettings.port(text, field: "DISCFG_AGENT_PORT", allowsAny: false) }
            #expect(error?.field == "DISCFG_AGENT_PORT", "\(text)")
            #expect(error?.message.contains("from 1 to 65535") == true, "\(text): \(error?.message ?? "")")
        }
    }
}
