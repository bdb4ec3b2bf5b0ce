import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("ConfigName")
struct ConfigNameTests {
    @Test(arguments: ["a", "myapp-prod", "A_b.c-1", "0", "...", "-", String(repeating: "x", count: 200)])
    func validNamesAreKeptAsGiven(raw: String) throws {
        #expect(try ConfigName(raw).rawValue == raw)
        #expect(try ConfigName(raw).description == raw)
    }

    @Test func emptyNameIsInvalid() throws {
        try expectError(.invalidArgument, field: "config", mentioning: ["empty"]) { try ConfigName("") }
    }

    @Test func nameOf201CharactersIsInvalid() throws {
        try expectError(.invalidArgument, field: "config", mentioning: ["200"]) { try ConfigName(String(repeating: "x", count: 201)) }
    }

    @Test(arguments: [
        ("my app", " "), ("a/b", "/"), ("caf\u{E9}", "\u{E9}"), ("a:b", ":"), ("a\nb", "\\u{a}"), ("a\"b", "\\\""), ("a%20b", "%"),
    ])
    func nameWithABadCharacterNamesTheCharacter(raw: String, shown: String) throws {
        try expectError(.invalidArgument, field: "config", mentioning: ["contains \"\(shown)\"", "letters, digits"]) { try ConfigName(raw) }
    }

    @Test func namesSortByTheirText() throws {
        let names = try ["b", "B", "a", "_", "1"].map { try ConfigName($0) }.sorted()
        #expect(names.map(\.rawValue) == ["1", "B", "_", "a", "b"])
    }

    @Test func codableValidates() throws {
        let decoded = try JSONDecoder().decode([ConfigName].self, from: Data(#"["ok"]"#.utf8))
        #expect(decoded == [try ConfigName("ok")])
        #expect(try String(decoding: JSONEncoder().encode(decoded), as: UTF8.self) == #"["ok"]"#)
        #expect(throws: DiscfgError.self) { try JSONDecoder().decode([ConfigName].self, from: Data(#"["not ok"]"#.utf8)) }
    }
}
