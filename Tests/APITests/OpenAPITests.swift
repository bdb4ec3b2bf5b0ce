import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

@Suite("API: the OpenAPI document stays true")
struct OpenAPITests {
    static let documentPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/openapi.yaml").standardized

    @Test("the served document is docs/openapi.yaml (run scripts/embed-openapi after editing it)")
    func embeddedMatchesFile() throws {
        let file = try String(contentsOf: Self.documentPath, encoding: .utf8)
        #expect(ConfigAPI.openAPIDocument.trimmingCharacters(in: .newlines) == file.trimmingCharacters(in: .newlines))
    }

    @Test("every route of the router is in the document, and every operation in the document is a route")
    func routesMatch() throws {
        let documented = Set(try Self.operations(in: ConfigAPI.openAPIDocument))
        let routed = Set(ConfigAPI.routes.map { "\($0.method.rawValue) \($0.path)" })
        #expect(routed.subtracting(documented).isEmpty, "routes missing from docs/openapi.yaml: \(routed.subtracting(documented).sorted())")
        #expect(documented.subtracting(routed).isEmpty, "documented but not routed: \(documented.subtracting(routed).sorted())")
        #expect(routed.count >= 14)
    }

    @Test("the document's alarm pattern admits exactly the alarm names the store takes: member ids up to 2^64-1, no leading zeros")
    func alarmPatternMatchesTheStore() throws {
        let lines = ConfigAPI.openAPIDocument.split(separator: "\n")
        let start = try #require(lines.firstIndex(of: "    AlarmName:"))
        let line = try #require(lines[start...].first { $0.hasPrefix("      pattern: '") })
        let pattern = try Regex(String(line.dropFirst("      pattern: '".count).dropLast()))
        let max = UInt64.max
        var names = ["NOSPACE", "NOSPACE@0", "NOSPACE@", "NOSPACE@00", "NOSPACE@007", "NOSPACE@-1", "NOSPACE@1x", "CORRUPT", "NOSPACE@0@0"]
        names += ["\(max)", "\(max - 1)", "18446744073709551616", "18446744073709551620", "99999999999999999999", "10000000000000000000",
                  "9999999999999999999", "100000000000000000000", "18446744073709550000", "18446744073709551599"].map { "NOSPACE@\($0)" }
        var random = SeededGenerator(state: 59)
        for _ in 0..<2_000 { names.append("NOSPACE@\(random.next())"); names.append("NOSPACE@\(random.next())\(random.next() % 10)") }
        for name in names {
            let taken = (try? RaisedAlarm(named: name)) != nil
            #expect((name.wholeMatch(of: pattern) != nil) == taken, "\(name): the store \(taken ? "takes" : "refuses") it")
        }
    }

    /// `METHOD /path` for each operation under `paths:` (two-space path keys, four-space methods).
    static func operations(in yaml: String) throws -> [String] {
        var operations: [String] = []
        var inPaths = false
        var currentPath: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, !line.isEmpty, !line.hasPrefix(" ") { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                currentPath = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let path = currentPath {
                let word = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "put", "post", "patch", "delete"].contains(word) { operations.append("\(word.uppercased()) \(path)") }
            }
        }
        return operations
    }
}
