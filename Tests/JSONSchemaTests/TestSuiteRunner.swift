import Foundation
import Testing

import DiscfgJSON
@testable import JSONSchema

/// Runs the official JSON-Schema-Test-Suite (bundled under Resources, see its SOURCE file).
///
/// Every case must pass except those listed in `known-failures.json`, and those must still
/// fail, so the list always says exactly what does not work.
enum SchemaTestSuite {
    static var root: URL {
        Bundle.module.url(forResource: "json-schema-test-suite", withExtension: nil)!
    }

    /// The suite's remotes, served from memory at the URLs the suite expects; nothing is fetched.
    static let registry: [String: JSONValue] = {
        let remotes = root.appendingPathComponent("remotes")
        var registry: [String: JSONValue] = [:]
        let enumerator = FileManager.default.enumerator(at: remotes, includingPropertiesForKeys: nil)!
        let prefix = remotes.standardizedFileURL.path + "/"
        for case let url as URL in enumerator where url.pathExtension == "json" {
            let relative = String(url.standardizedFileURL.path.dropFirst(prefix.count))
            registry["http://localhost:1234/" + relative] = try! JSONParser.parse([UInt8](Data(contentsOf: url)))
        }
        return registry
    }()

    /// `draft/file | group | test` to the reason the case fails.
    static let knownFailures: [String: String] = {
        let url = Bundle.module.url(forResource: "known-failures", withExtension: "json")!
        guard case .object(let object) = try! JSONParser.parse([UInt8](Data(contentsOf: url))) else { return [:] }
        var failures: [String: String] = [:]
        for (key, value) in object {
            if case .string(let reason) = value { failures[key] = reason }
        }
        return failures
    }()

    /// Formats asserted by `FormatChecker`, whose optional tests must pass too.
    static let formatFiles = FormatChecker.supported.map { "optional/format/\($0).json" }

    struct Outcome {
        var passed = 0
        var total = 0
        var unexpected: [String] = []
        var fixed: [String] = []
    }

    /// Runs every case of `files` in `draft`'s folder.
    static func run(draft folder: String, dialect: SchemaDraft, files: [String]) throws -> Outcome {
        var outcome = Outcome()
        let base = root.appendingPathComponent("tests").appendingPathComponent(folder)
        for file in files {
            let url = base.appendingPathComponent(file)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            guard case .array(let groups) = try JSONParser.parse([UInt8](Data(contentsOf: url))) else { continue }
            for group in groups {
                guard case .string(let groupName)? = group["description"], let schema = group["schema"], case .array(let tests)? = group["tests"] else { continue }
                let validator = Result { try JSONSchemaValidator(schema: schema, registry: registry, options: .init(defaultDraft: dialect)) }
                for test in tests {
                    guard case .string(let testName)? = test["description"], let data = test["data"], case .bool(let expected)? = test["valid"] else { continue }
                    let key = "\(folder)/\(file) | \(groupName) | \(testName)"
                    var passed = false
                    if case .success(let validator) = validator {
                        let result = validator.validate(data)
                        passed = result.isValid == expected && (result.isValid == result.errors.isEmpty)
                    }
                    outcome.total += 1
                    if passed { outcome.passed += 1 }
                    let known = knownFailures[key] != nil
                    if !passed, !known { outcome.unexpected.append(key) }
                    if passed, known { outcome.fixed.append(key) }
                }
            }
        }
        return outcome
    }

    static func requiredFiles(_ folder: String) throws -> [String] {
        let url = root.appendingPathComponent("tests").appendingPathComponent(folder)
        return try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".json") }.sorted()
    }

    /// The optional tests outside `optional/format` (bignum, ECMA-262 regex, cross-draft…).
    static func optionalFiles(_ folder: String) throws -> [String] {
        try requiredFiles(folder + "/optional").map { "optional/" + $0 }
    }
}

@Suite("JSONSchemaTests.TestSuite")
struct TestSuiteRunnerTests {
    @Test(arguments: [("draft2020-12", SchemaDraft.draft2020_12), ("draft7", SchemaDraft.draft7)])
    func requiredTestsPass(folder: String, dialect: SchemaDraft) throws {
        let outcome = try SchemaTestSuite.run(draft: folder, dialect: dialect, files: SchemaTestSuite.requiredFiles(folder))
        print("JSON-Schema-Test-Suite \(folder) required: \(outcome.passed)/\(outcome.total) passed")
        #expect(outcome.total > 800)
        #expect(outcome.unexpected.isEmpty, "failing and not in known-failures.json:\n\(outcome.unexpected.joined(separator: "\n"))")
        #expect(outcome.fixed.isEmpty, "in known-failures.json but passing now:\n\(outcome.fixed.joined(separator: "\n"))")
    }

    @Test(arguments: [("draft2020-12", SchemaDraft.draft2020_12), ("draft7", SchemaDraft.draft7)])
    func formatTestsPass(folder: String, dialect: SchemaDraft) throws {
        let outcome = try SchemaTestSuite.run(draft: folder, dialect: dialect, files: SchemaTestSuite.formatFiles.sorted())
        print("JSON-Schema-Test-Suite \(folder) optional/format: \(outcome.passed)/\(outcome.total) passed")
        #expect(outcome.total > 300)
        #expect(outcome.unexpected.isEmpty, "failing and not in known-failures.json:\n\(outcome.unexpected.joined(separator: "\n"))")
        #expect(outcome.fixed.isEmpty, "in known-failures.json but passing now:\n\(outcome.fixed.joined(separator: "\n"))")
    }

    @Test(arguments: [("draft2020-12", SchemaDraft.draft2020_12), ("draft7", SchemaDraft.draft7)])
    func optionalTestsPass(folder: String, dialect: SchemaDraft) throws {
        let outcome = try SchemaTestSuite.run(draft: folder, dialect: dialect, files: SchemaTestSuite.optionalFiles(folder))
        print("JSON-Schema-Test-Suite \(folder) optional (other than format): \(outcome.passed)/\(outcome.total) passed")
        #expect(outcome.total > 100)
        #expect(outcome.unexpected.isEmpty, "failing and not in known-failures.json:\n\(outcome.unexpected.joined(separator: "\n"))")
        #expect(outcome.fixed.isEmpty, "in known-failures.json but passing now:\n\(outcome.fixed.joined(separator: "\n"))")
    }

    @Test func everyKnownFailureNamesARealCase() throws {
        var keys: Set<String> = []
        for folder in ["draft2020-12", "draft7"] {
            let base = SchemaTestSuite.root.appendingPathComponent("tests").appendingPathComponent(folder)
            for file in try SchemaTestSuite.requiredFiles(folder) + SchemaTestSuite.optionalFiles(folder) + SchemaTestSuite.formatFiles {
                let url = base.appendingPathComponent(file)
                guard FileManager.default.fileExists(atPath: url.path), case .array(let groups) = try JSONParser.parse([UInt8](Data(contentsOf: url))) else { continue }
                for group in groups {
                    guard case .string(let g)? = group["description"], case .array(let tests)? = group["tests"] else { continue }
                    for case .string(let t)? in tests.map({ $0["description"] }) { keys.insert("\(folder)/\(file) | \(g) | \(t)") }
                }
            }
        }
        let stale = SchemaTestSuite.knownFailures.keys.filter { !keys.contains($0) }
        #expect(stale.isEmpty, "known-failures.json names cases that do not exist: \(stale)")
    }
}
