@testable import DiscfgDynamoDB
import Foundation
import Testing

/// The DynamoDB layout has one home, `DynamoDBSchema.swift`. These tests hold the rest to it:
/// no attribute name, partition or expression is spelled elsewhere in the code that reads
/// and writes the table, and `docs/dynamodb-layout.md` describes the same names.
@Suite("DynamoDB: one schema")
struct SchemaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// Every name an item may carry, in every slot it may sit in.
    static var storedNames: Set<String> {
        var names = Set(Attribute.allCases.map(\.rawValue))
        for slot in [ItemSlot.event, .previous] {
            for field in slotFields { names.insert(field.name(in: slot)) }
        }
        return names
    }

    static let slotFields: [Attribute] = [.value, .version, .createRevision, .modRevision, .modifiedAt, .contentType, .expiresAt]

    static let partitions = [
        DynamoDBLayout.registryPK, DynamoDBLayout.tokensPK, DynamoDBLayout.issuedMarkerSK, DynamoDBLayout.deliveriesPK,
        DynamoDBLayout.historySuffix, DynamoDBLayout.tombstoneSuffix, DynamoDBLayout.leaseSuffix, DynamoDBLayout.overflowSuffix,
    ]

    @Test("no two attributes share a stored name in any slot")
    func namesAreDistinct() {
        var seen: [String: String] = [:]
        for attribute in Attribute.allCases { seen[attribute.rawValue] = "\(attribute)" }
        for slot in [ItemSlot.event, .previous] {
            for field in Self.slotFields {
                let name = field.name(in: slot)
                #expect(seen[name] == nil, "\(field) in slot \(slot) is stored as \(name), which \(seen[name] ?? "") already uses")
                seen[name] = "\(field) in \(slot)"
            }
        }
    }

    @Test("the code that reads and writes the table spells no attribute, partition or expression of its own")
    func noStrayNames() throws {
        var strays: [String] = []
        for folder in ["Sources/DiscfgDynamoDB", "Sources/DiscfgLambda"] {
            let directory = Self.root.appendingPathComponent(folder)
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            where file.hasSuffix(".swift") && file != "DynamoDBSchema.swift" {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    for problem in Self.problems(in: String(line)) { strays.append("\(folder)/\(file):\(number + 1): \(problem)") }
                }
            }
        }
        #expect(strays.isEmpty, "name these in DynamoDBSchema.swift and use them from there:\n\(strays.joined(separator: "\n"))")
    }

    @Test("the guard sees the kinds of stray it is for")
    func guardCatchesStrays() {
        #expect(!Self.problems(in: ##"let sk = item["sk"]?.string"##).isEmpty)
        #expect(!Self.problems(in: ##"attributes["pver"] = .number(1)"##).isEmpty)
        #expect(!Self.problems(in: ##"names: ["#lock": "lock"]"##).isEmpty)
        #expect(!Self.problems(in: ##"pk.hasSuffix("#h")"##).isEmpty)
        #expect(!Self.problems(in: ##"KeyConditionExpression: "pk = :pk""##).isEmpty)
        #expect(!Self.problems(in: ##"Expression("attribute_not_exists(pk)")"##).isEmpty)
        #expect(!Self.problems(in: ##"UpdateExpression: "SET delivered = :r""##).isEmpty)
        #expect(Self.problems(in: ##"Expression("\(.lock) = :lock AND attribute_not_exists(\(.deleting))")"##).isEmpty)
        #expect(Self.problems(in: ##"throw DiscfgError.invalid("table", "no table")"##).isEmpty)
        #expect(Self.problems(in: ##"/// the `sk` of an event"##).isEmpty)
    }

    @Test("docs/dynamodb-layout.md names every attribute, partition and index, and no other name")
    func documentAgrees() throws {
        let document = try String(contentsOf: Self.root.appendingPathComponent("docs/dynamodb-layout.md"), encoding: .utf8)
        let quoted = Set(Self.codeSpans(document))
        for name in Self.storedNames.sorted() {
            #expect(quoted.contains(name), "docs/dynamodb-layout.md does not describe attribute `\(name)`")
        }
        for partition in Self.partitions + DynamoDBIndex.allCases.map(\.rawValue) {
            #expect(document.contains(partition), "docs/dynamodb-layout.md does not mention \(partition)")
        }
        for index in DynamoDBIndex.allCases {
            #expect(document.contains("`\(index.rawValue)` | `pk` + `\(index.sortKey.rawValue)`"), "index \(index) is documented with another key")
            #expect(document.contains("projection `\(index.projection)`"), "index \(index) is documented with another projection")
        }
        // Every name in an `attribute` column of the document is one the code stores.
        var column: Int?
        for row in document.split(separator: "\n").map(String.init) {
            guard row.hasPrefix("|") else { column = nil; continue }
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map { $0.trimmingCharacters(in: .whitespaces) }
            if let header = cells.firstIndex(of: "attribute") { column = header; continue }
            guard let column, column < cells.count, !cells[column].hasPrefix("---") else { continue }
            for name in Self.codeSpans(cells[column]) {
                #expect(Self.storedNames.contains(name), "docs/dynamodb-layout.md documents attribute `\(name)`, which the code does not store")
            }
        }
        #expect(quoted.contains("lsk") && quoted.contains("nexp"), "the attribute tables were not read")
    }

    // MARK: - The guard

    static let expressionWords: Set<String> = ["attribute_exists", "attribute_not_exists", "AND", "OR", "NOT", "BETWEEN", "SET", "REMOVE", "begins_with"]

    /// What in one line of code spells a layout name: an attribute name used as a
    /// subscript, dictionary key or value; a partition literal; or an expression naming an
    /// attribute without interpolating it.
    static func problems(in line: String) -> [String] {
        let code = line.trimmingCharacters(in: .whitespaces)
        guard !code.hasPrefix("//") else { return [] }
        var problems: [String] = []
        for literal in stringLiterals(code) {
            if storedNames.contains(literal), code.contains("[\"\(literal)\"]") || code.contains("\"\(literal)\":") || code.contains(": \"\(literal)\"]") || code.contains(": \"\(literal)\",") {
                problems.append("attribute name \"\(literal)\"")
            }
            if partitions.contains(where: { literal == $0 || literal.hasPrefix($0 + "/") }) {
                problems.append("partition or sort-key form \"\(literal)\"")
            }
            if looksLikeExpression(literal) {
                let bare = literal
                    .replacingOccurrences(of: #"\\\([^)]*\)"#, with: " ", options: .regularExpression)
                    .replacingOccurrences(of: #":[A-Za-z0-9_]+"#, with: " ", options: .regularExpression)
                let words = bare.split { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "#") }.map(String.init)
                let named = words.filter { !expressionWords.contains($0) && !$0.allSatisfy(\.isNumber) }
                if !named.isEmpty { problems.append("expression \"\(literal)\" names \(named.joined(separator: ", ")) itself") }
            }
        }
        return problems
    }

    static func looksLikeExpression(_ literal: String) -> Bool {
        literal.range(of: #"(= :|<= :|> :|< :|BETWEEN :|attribute_(not_)?exists\(|^SET |^REMOVE )"#, options: .regularExpression) != nil
    }

    /// The string literals of one line (interpolations kept as written).
    static func stringLiterals(_ line: String) -> [String] {
        var literals: [String] = []
        var current: String?
        var depth = 0
        var escaped = false
        for character in line {
            guard var text = current else {
                if character == "\"" { current = "" }
                continue
            }
            if escaped {
                text.append(character)
                escaped = false
                if character == "(" { depth += 1 }
            } else if depth > 0 {
                text.append(character)
                if character == "(" { depth += 1 } else if character == ")" { depth -= 1 }
            } else if character == "\\" {
                text.append(character)
                escaped = true
            } else if character == "\"" {
                literals.append(text)
                current = nil
                continue
            } else {
                text.append(character)
            }
            current = text
        }
        return literals
    }

    /// The `code spans` of a Markdown text, split at commas inside them.
    static func codeSpans(_ text: some StringProtocol) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }
}
