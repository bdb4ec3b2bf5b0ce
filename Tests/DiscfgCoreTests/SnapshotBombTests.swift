import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

/// Snapshot files are input from anyone who may import: their cost is bounded before it
/// is paid, and what JSON cannot hold is refused, not crashed on.
@Suite("Snapshot files: bombs are refused, ordinary YAML still reads")
struct SnapshotBombTests {
    /// Nine levels of ten aliases each: 10^9 strings once expanded, 1 KB as written.
    static let billionLaughs: String = {
        var lines = ["a0: &a0 \"lol\""]
        for level in 1...9 {
            let refs = Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
            lines.append("a\(level): &a\(level) [\(refs)]")
        }
        lines.append("/bomb: *a9")
        return lines.joined(separator: "\n") + "\n"
    }()

    @Test("aliases that expand past the node budget are refused at once")
    func aliasBomb() throws {
        #expect(Self.billionLaughs.utf8.count < 1200)
        try expectError(.invalidArgument, field: "file", mentioning: ["aliases", "nodes"]) { try SnapshotFormat.yaml.decode(Data(Self.billionLaughs.utf8)) }
    }

    @Test("nesting deeper than 64 levels is refused, in flow and block style, however deep")
    func depthBomb() throws {
        let flow = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        try expectError(.invalidArgument, field: "file", mentioning: ["nesting"]) { try SnapshotFormat.yaml.decode(Data(("/k: " + flow).utf8)) }
        var block = "/k:\n"
        for depth in 1...100 { block += String(repeating: " ", count: depth) + "- \n" }
        try expectError(.invalidArgument, field: "file", mentioning: ["deeper than 64"]) { try SnapshotFormat.yaml.decode(Data(block.utf8)) }
        let json = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        try expectError(.invalidArgument, field: "file") { try SnapshotFormat.json.decode(Data("{\"/k\": \(json)}".utf8)) }
    }

    @Test("a few aliases, merge keys and 64 levels are fine")
    func ordinaryYAML() throws {
        let text = """
        defaults: &defaults
          host: db1
          port: 5432
        /db: { <<: *defaults, port: 6432 }
        /list: [*defaults, *defaults]
        /quoted: "5432"
        /number: 5432
        /flag: true
        """
        let snapshot = try SnapshotFormat.yaml.decode(Data(text.utf8))
        let values = Dictionary(uniqueKeysWithValues: snapshot.items.map { ($0.key.path, String(decoding: $0.value, as: UTF8.self)) })
        #expect(values["/db"] == #"{"host":"db1","port":6432}"#)
        #expect(values["/list"] == #"[{"host":"db1","port":5432},{"host":"db1","port":5432}]"#)
        #expect(values["/quoted"] == "5432")
        #expect(values["/number"] == "5432")
        #expect(snapshot.items.first { $0.key.path == "/number" }?.contentType == "application/json")
        #expect(values["/flag"] == "true")
        let deep = String(repeating: "[", count: 63) + "1" + String(repeating: "]", count: 63)
        #expect(try SnapshotFormat.yaml.decode(Data("/k: \(deep)".utf8)).items.count == 1)
    }

    @Test("an exported YAML snapshot reads back unchanged")
    func roundTrip() throws {
        let snapshot = ConfigSnapshot(items: [
            .init(key: try Key("/a"), value: Data("line1\nline2".utf8)),
            .init(key: try Key("/b"), value: Data([0, 255, 1]), contentType: "application/octet-stream"),
            .init(key: try Key("/c"), value: Data("&anchor *alias <<: [x]".utf8)),
        ])
        #expect(try SnapshotFormat.yaml.decode(try SnapshotFormat.yaml.encode(snapshot)).items == snapshot.items)
    }

    @Test("numbers JSON cannot hold are refused naming the key; duplicate keys and multiple documents too")
    func unrepresentable() throws {
        for value in [".nan", ".inf", "-.inf", ".NaN"] {
            try expectError(.invalidArgument, field: "file", mentioning: ["/a", "JSON cannot represent"]) { try SnapshotFormat.yaml.decode(Data("a: \(value)\n".utf8)) }
        }
        try expectError(.invalidArgument, field: "file", mentioning: ["1e400"]) { try SnapshotFormat.json.decode(Data(#"{"/big": 1e400}"#.utf8)) }
        try expectError(.invalidArgument, field: "file", mentioning: ["twice"]) { try SnapshotFormat.yaml.decode(Data("a: 1\na: 2\n".utf8)) }
        try expectError(.invalidArgument, field: "file", mentioning: ["more than one"]) { try SnapshotFormat.yaml.decode(Data("a: 1\n---\nb: 2\n".utf8)) }
        try expectError(.invalidArgument, field: "file", mentioning: ["*nowhere"]) { try SnapshotFormat.yaml.decode(Data("a: *nowhere\n".utf8)) }
    }
}

/// `env` output is read by shells, Docker and dotenv libraries line by line: no value
/// may carry a line break into it.
@Suite("Snapshot files: env output never breaks a line inside a value")
struct EnvOutputTests {
    @Test("CR LF, CR and LF are escaped; the file reads back to the same values")
    func lineBreaks() throws {
        let values = ["x\r\nEVIL=1", "a\rb", "a\nb", "tab\there", "quote\" $HOME `cmd` \\"]
        let snapshot = ConfigSnapshot(items: try values.enumerated().map { .init(key: try Key("/k\($0.offset)"), value: Data($0.element.utf8)) })
        let text = String(decoding: try SnapshotFormat.env.encode(snapshot), as: UTF8.self)
        #expect(!text.unicodeScalars.contains("\r"))
        #expect(text.unicodeScalars.filter { $0 == "\n" }.count == values.count)
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("EVIL") })
        let back = try SnapshotFormat.env.decode(Data(text.utf8))
        #expect(back.items.map { String(decoding: $0.value, as: UTF8.self) } == values)
    }

    @Test("other control characters and Unicode line separators are refused naming the key")
    func controls() throws {
        for scalar in ["\u{0B}", "\u{0C}", "\u{1E}", "\u{85}", "\u{2028}", "\u{2029}", "\u{00}"] {
            let snapshot = ConfigSnapshot(items: [.init(key: try Key("/k"), value: Data("a\(scalar)b".utf8))])
            let error = #expect(throws: DiscfgError.self) { try SnapshotFormat.env.encode(snapshot) }
            #expect(error?.code == .notRepresentable)
            #expect(error?.field == "format")
            #expect(error?.message.contains("/k") == true)
        }
    }

    @Test("CR LF files import as LF files do")
    func crlfFiles() throws {
        let snapshot = try SnapshotFormat.env.decode(Data("A=1\r\nB=\"two words\"\r\n".utf8))
        #expect(snapshot.items.map(\.key.path) == ["/A", "/B"])
        #expect(snapshot.items.map { String(decoding: $0.value, as: UTF8.self) } == ["1", "two words"])
    }
}
