import DiscfgConformance
import Foundation

/// What the sources say about the conformance suite, read from the files themselves: the
/// checks `DiscfgConformance` declares, and the checks this target's tests run against
/// each kind of store. Tests compare both with ``StoreConformance/checks``, the one list
/// of registered checks, so a check declared but not registered, or registered but run
/// against fewer stores than declare it, fails a test instead of going unnoticed.
struct ConformanceSources {
    /// One `public func` of a `…Checks` struct: `ItemChecks.firstSetCreatesVersionOneAtRevisionOne`,
    /// with the label of its parameter when it takes one argument per run.
    struct DeclaredCheck: Hashable {
        var method: String
        var argumentLabel: String?
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every check method declared in `Sources/DiscfgConformance/*Checks.swift`.
    let declared: [DeclaredCheck]
    /// For each check method (`Area.method`), the kinds of store its test in this target
    /// runs it against, as the test's `arguments:` say.
    let runAgainst: [String: Set<StoreKind>]

    init() throws {
        let sources = Self.root.appendingPathComponent("Sources/DiscfgConformance")
        var declared: [DeclaredCheck] = []
        var accessors: [String: String] = [:]
        for file in try Self.swiftFiles(in: sources) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: #/public var (\w+): (\w+Checks) \{/#) {
                accessors[String(match.1)] = String(match.2)
            }
            guard file.lastPathComponent.hasSuffix("Checks.swift") else { continue }
            var area: String?
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if let start = line.firstMatch(of: #/^public struct (\w+Checks)\b/#) {
                    area = String(start.1)
                } else if line.first.map({ !$0.isWhitespace && $0 != "}" }) == true {
                    // Any other top-level declaration ends the struct.
                    area = nil
                } else if let area, let function = line.firstMatch(of: #/^    public func (\w+)\(((\w+)(?: \w+)?:)?/#) {
                    declared.append(DeclaredCheck(method: "\(area).\(function.1)", argumentLabel: function.3.map(String.init)))
                }
            }
        }

        let tests = Self.root.appendingPathComponent("Tests/StoreConformanceTests")
        var runAgainst: [String: Set<StoreKind>] = [:]
        for file in try Self.swiftFiles(in: tests) {
            let text = try String(contentsOf: file, encoding: .utf8)
            // Each test from its `@Test(` to the next: its attribute, then its body.
            for test in text.split(separator: "@Test(").dropFirst() {
                guard let attribute = test.split(separator: "func ", maxSplits: 1).first else { continue }
                let kinds = Self.kinds(in: attribute)
                for call in test.matches(of: #/onformance\.(\w+)\.(\w+)\(/#) {
                    guard let area = accessors[String(call.1)] else { continue }
                    runAgainst["\(area).\(call.2)", default: []].formUnion(kinds)
                }
            }
        }
        self.declared = declared
        self.runAgainst = runAgainst
    }

    /// The kinds of store a test's attribute runs it against: `StoreKind.allCases`, or
    /// `StoreKind.with(.capability)`.
    private static func kinds(in attribute: Substring) -> Set<StoreKind> {
        if attribute.contains("StoreKind.allCases") { return Set(StoreKind.allCases) }
        guard let with = attribute.firstMatch(of: #/StoreKind\.with\(\.(\w+)\)/#) else { return [] }
        let capabilities: [String: StoreConformance.Capabilities] = [
            "tokens": .tokens, "exportPagesReadHistory": .exportPagesReadHistory, "leases": .leases, "nestedTransactions": .nestedTransactions,
            "largeChanges": .largeChanges,
        ]
        guard let capability = capabilities[String(with.1)] else { return [] }
        return Set(StoreKind.with(capability))
    }

    private static func swiftFiles(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
    }
}

extension StoreConformance.Check {
    /// `Area.method`: the name without its argument.
    var method: String { String(name.prefix { $0 != "(" }) }
}
