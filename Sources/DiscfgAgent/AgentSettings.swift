import DiscfgCore
import Foundation

/// The agent's settings as text, read the same way wherever they come from: `discfg
/// agent`'s flags (`--interval`, `--port`) and its Lambda extension's environment
/// (`DISCFG_AGENT_INTERVAL`, `DISCFG_AGENT_PORT`). Each takes the name to blame, so the
/// message names the flag or variable the value came from.
public enum AgentSettings {
    /// The shortest interval: a check a second is already 3600 requests an hour per config.
    public static let minimumInterval: Duration = .seconds(1)
    /// The longest interval.
    public static let maximumInterval: Duration = .seconds(86_400)

    /// Reads an interval: `15` (seconds), `15s`, `500ms`, `2m`, `1h`; 1 second to 24 hours.
    /// - Throws: `invalidArgument` with `field` as its field, naming the bounds.
    public static func interval(_ text: String, field: String) throws -> Duration {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(suffix: String, milliseconds: Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        // "ms" before "s" and "m": the first unit whose suffix leaves only digits.
        let unit = units.first { unit in
            trimmed.hasSuffix(unit.suffix) && !trimmed.dropLast(unit.suffix.count).isEmpty
                && trimmed.dropLast(unit.suffix.count).utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        }
        let digits = unit.map { String(trimmed.dropLast($0.suffix.count)) } ?? trimmed
        let scale = unit?.milliseconds ?? 1000
        let maximum = Int64(maximumInterval.components.seconds) * 1000
        let count = try? NumberField(field, 1...maximum / scale).parse(digits)
        guard let count, count * scale >= Int64(minimumInterval.components.seconds) * 1000 else {
            let shown = text.isEmpty ? "nothing" : String(text.prefix(40)).debugEscaped + (text.count > 40 ? "…" : "")
            throw DiscfgError.invalid(field, "\(field) must be a duration from 1s to 24h (seconds, or with a unit: 500ms, 15s, 2m, 1h), got \(shown)")
        }
        return .milliseconds(count * scale)
    }

    /// Reads a loopback port, 1 to 65535; 0 (a free port, which the caller must then
    /// announce) only when `allowsAny`.
    /// - Throws: `invalidArgument` with `field` as its field, naming the bounds.
    public static func port(_ text: String, field: String, allowsAny: Bool) throws -> Int {
        Int(try NumberField(field, (allowsAny ? 0 : 1)...65_535).parse(text))
    }
}
