import ArgumentParser
import DiscfgCore
import DiscfgJSON
import DiscfgWire
import Foundation
import JSONSchema

struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Attach JSON Schemas to keys and prefixes; check documents offline.",
        discussion: """
        A schema (JSON Schema, draft 2020-12 or 7) is attached to a key, or to a \
        prefix such as /app/ (a trailing slash), where it checks the keys under \
        it as one document, as 'discfg get /app/ --document' prints it. Every \
        change is checked before it is made (set, patch, delete, txn, import, \
        set --document), and one that breaks a schema is refused in one sentence \
        naming the schema, where and why ("refused by the schema on /app/: \
        /db/port must be ≤ 65535; nothing changed"), exit 2, nothing changed.

        Schemas are part of their config: each is kept at a revision under \
        /.discfg/schema/, has history, and is exported and imported with the keys.

        Examples:
          discfg schema set app/settings settings.schema.json
          discfg schema set /app/ app.schema.json --force
          discfg schema get app/settings
          discfg schema ls
          discfg schema rm /app/
          discfg schema validate settings.schema.json dev.json prod.json
        """,
        subcommands: [Attach.self, Get.self, List.self, Remove.self, Validate.self]
    )

    /// Reads a schema file and checks it is a schema, naming the file in any error.
    static func readSchema(_ file: String, limit: Int) throws -> (data: Data, validator: JSONSchemaValidator) {
        let data = try ValueInput.readFile(file, field: "schema", limit: limit)
        do {
            return (data, try SchemaBook.validator(data))
        } catch let error as DiscfgError {
            throw DiscfgError(error.code, "\(file == "-" ? "standard input" : file): \(error.message)", field: "schema")
        }
    }

    struct Attach: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Attach a schema to a key, or to a prefix (TARGET ending in /).",
            usage: "discfg schema set [<options>] [<config>] <target> <file>",
            discussion: """
            Replaces the target's schema, if it has one. The values it covers are \
            checked first: when any breaks it, nothing is attached and each \
            violation is printed (exit 2). --force attaches it anyway and names \
            what breaks it now; later changes must then meet it.

            Examples:
              discfg schema set app/settings settings.schema.json
              discfg schema set /app/ app.schema.json
              cat s.json | discfg schema set myapp /app/ - --force
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions

        @Flag(name: .long, help: "Attach it even when values it covers break it.")
        var force = false

        @Argument(help: PositionalArguments.help("[CONFIG] TARGET FILE ('-' for standard input)"), completion: ShellCompletion.configOrKey) var arguments: [String] = []

        func run() async throws {
            try await reason.attributed {
                try await global.run("schema-set") { output in
                    let (config, rawTarget, file) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configKeyValue(names: ["TARGET", "FILE"])
                    guard let file else { throw usage("no schema file given: discfg schema set [CONFIG] TARGET FILE", field: "file") }
                    let target = try SchemaTarget(rawTarget)
                    let (schema, _) = try SchemaCommand.readSchema(file, limit: Limits.maxValueBytes)
                    let change = try await global.openStore().setSchema(target, to: schema, in: config, force: force)
                    var envelope = Envelope(action: "schema-set", config: config, change: change.event)
                    envelope.violations = change.violations.isEmpty ? nil : change.violations
                    output.emit(envelope) { "schema of \(target) set (revision \(change.event.revision))" }
                    if !change.violations.isEmpty {
                        let count = change.violations.count
                        output.warn("attached with --force; \(count) violation\(count == 1 ? "" : "s") of it now:")
                        if output.format == .human {
                            FileHandle.standardError.write(Data(change.violations.map { "\($0)\n" }.joined().utf8))
                        }
                    }
                }
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the schema attached to a key or prefix.",
            usage: "discfg schema get [<options>] [<config>] <target>"
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

        @Option(name: .long, help: ArgumentHelp("The schema as it was at this config revision.", valueName: "r"),
                transform: { UInt64(try NumberField.revision("--revision").parse($0)) })
        var revision: UInt64?

        @Argument(help: PositionalArguments.help("[CONFIG] TARGET"), completion: ShellCompletion.schemaTargets) var arguments: [String] = []

        func run() async throws {
            try await global.run("schema") { output in
                let (config, rawTarget) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndTarget(what: "TARGET")
                let target = try SchemaTarget(rawTarget)
                let at = revision.map { Revision($0) }
                guard let item = try await global.openStore().get(target.storageKey, in: config, atRevision: at) else {
                    let when = at.map { " at revision \($0.rawValue)" } ?? ""
                    throw DiscfgError(.keyNotFound, "\(target) of config \"\(config)\" has no schema\(when)", field: "target")
                }
                var envelope = Envelope(action: "schema")
                envelope.config = config.rawValue
                envelope.item = ItemDocument(item)
                envelope.revision = at
                output.emit(envelope) { String(decoding: item.value, as: UTF8.self) }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List a config's schemas: each target and the revision it was set at.",
            usage: "discfg schema ls [<options>] [<config>]",
            discussion: """
            -f json prints each schema's target, revision, version, time of its \
            last change, and the schema itself. Each is kept as a key of the config: \
            /.discfg/schema/ and the target with '%' written %25 and '/' written %2F.
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

        @Argument(help: PositionalArguments.help("[CONFIG]"), completion: ShellCompletion.configs) var arguments: [String] = []

        func run() async throws {
            try await global.run("schemas") { output in
                let config = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configOnly()
                let schemas = try await global.openStore().schemas(in: config).sorted { $0.target < $1.target }
                var envelope = Envelope(action: "schemas")
                envelope.config = config.rawValue
                envelope.schemas = try schemas.map { try SchemaDocument(target: $0.target, item: $0.item) }
                output.emit(envelope) {
                    guard !schemas.isEmpty else { return "no schemas in config \(config); attach one with 'discfg schema set TARGET FILE'" }
                    return Show.table(["TARGET", "REVISION", "MODIFIED"], schemas.map { target, item in
                        [target.path, String(item.modRevision.rawValue), Show.relative(item.modifiedAt)]
                    })
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove the schema attached to a key or prefix.",
            usage: "discfg schema rm [<options>] [<config>] <target>"
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @OptionGroup var reason: ChangeOptions

        @Argument(help: PositionalArguments.help("[CONFIG] TARGET"), completion: ShellCompletion.schemaTargets) var arguments: [String] = []

        func run() async throws {
            try await reason.attributed {
                try await global.run("schema-delete") { output in
                    let (config, rawTarget) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndTarget(what: "TARGET")
                    let target = try SchemaTarget(rawTarget)
                    let change = try await global.openStore().setSchema(target, to: nil, in: config, force: false)
                    output.emit(Envelope(action: "schema-delete", config: config, change: change.event)) {
                        "schema of \(target) removed (revision \(change.event.revision))"
                    }
                }
            }
        }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check JSON documents against a schema, with no store.",
            usage: "discfg schema validate [<options>] <schema> <document> ...",
            discussion: """
            Prints 'DOCUMENT: valid' for each document that meets the schema, and \
            for each that does not, one line per violation on standard error: \
            DOCUMENT: POINTER: message (keyword). A schema or a document that is \
            not JSON is refused naming its line and column.

            Examples:
              discfg schema validate app.schema.json dev.json prod.json
              discfg get /app/ --document | discfg schema validate app.schema.json -

            EXIT CODES:
              0  every document is valid
              2  a document breaks the schema, or a file is not JSON, not a
                 schema, or unreadable
            """
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

        @Argument(help: ArgumentHelp("The schema file.", valueName: "schema")) var schema: String
        @Argument(help: ArgumentHelp("The documents to check ('-' for standard input).", valueName: "document")) var documents: [String] = []

        func run() async throws {
            try await global.run("schema-validate") { output in
                guard !documents.isEmpty else { throw usage("no document given: discfg schema validate SCHEMA DOCUMENT...", field: "document") }
                guard documents.filter({ $0 == "-" }).count + (schema == "-" ? 1 : 0) <= 1 else {
                    throw usage("standard input ('-') can be read only once", field: "document")
                }
                let (_, validator) = try SchemaCommand.readSchema(schema, limit: Limits.maxSnapshotBytes)
                // Every document is read before any is checked: one that is not JSON is bad input.
                let values = try documents.map { file in
                    let name = file == "-" ? "standard input" : file
                    let data = try ValueInput.readFile(file, field: "document", limit: Limits.maxSnapshotBytes)
                    do {
                        return (name, try JSONParser.parse(Array(data)))
                    } catch {
                        throw usage("\(name) is not valid JSON: \(error)", field: "document")
                    }
                }
                var violations: [SchemaViolation] = []
                for (name, value) in values {
                    let errors = validator.validate(value).errors
                    violations += errors.map { SchemaViolation(key: name, pointer: $0.instanceLocation, keyword: $0.keyword, message: $0.message) }
                    if errors.isEmpty, output.format == .human { output.raw(Data("\(name): valid\n".utf8)) }
                }
                if !violations.isEmpty {
                    let failed = Set(violations.map(\.key)).count
                    let documents = "\(failed) of \(values.count) document\(values.count == 1 ? "" : "s")"
                    throw DiscfgError(
                        .schemaViolation, "\(documents) \(failed == 1 ? "breaks" : "break") the schema: \(violations[0])",
                        field: "document", violations: violations
                    )
                }
                var envelope = Envelope(action: "schema-validate")
                envelope.violations = []
                output.emit(envelope) { "" }
            }
        }
    }
}
