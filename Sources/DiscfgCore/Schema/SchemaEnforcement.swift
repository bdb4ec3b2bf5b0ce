import Foundation
import DiscfgJSON
import JSONSchema
import Synchronization

/// Compiled schemas, shared by every change in the process: a schema is compiled once
/// per distinct text, however many writes it checks.
public enum SchemaBook {
    /// The most compiled schemas kept; past it the cache starts again.
    static let capacity = 256
    /// The bounds of one validation on the write path, a quarter of the validator's own
    /// defaults: a schema built to branch on every reference (`{"anyOf": [{"$ref": "#"},
    /// {"$ref": "#"}]}`) or a pattern that backtracks without end stops in about a
    /// quarter of a second and refuses the write, rather than hold the store's writer.
    public static let options = JSONSchemaValidator.Options(regexSteps: 2_500_000, maxEvaluations: 250_000)
    private static let compiled = Mutex<[Data: Result<JSONSchemaValidator, Problem>]>([:])

    /// What is wrong with a schema's text, said of no target in particular (the cache is
    /// shared by every target with the same text), e.g. `is not valid JSON: line 1, …`.
    struct Problem: Error {
        let predicate: String
    }

    /// The validator for a schema's text.
    /// - Throws: `invalidArgument` when the text is not JSON, or not a schema its dialect's
    ///   metaschema accepts, or one the validator refuses (a bad pattern, too large),
    ///   naming `target`.
    public static func validator(_ schema: Data, for target: SchemaTarget? = nil) throws -> JSONSchemaValidator {
        let result = compiled.withLock({ $0[schema] }) ?? {
            let result = Result { () throws(Problem) -> JSONSchemaValidator in try compile(schema) }
            compiled.withLock { cache in
                if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
                cache[schema] = result
            }
            return result
        }()
        do {
            return try result.get()
        } catch {
            throw DiscfgError.invalid("schema", "\(target.map { "the schema for \($0)" } ?? "the schema") \(error.predicate)")
        }
    }

    private static func compile(_ schema: Data) throws(Problem) -> JSONSchemaValidator {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(schema))
        } catch {
            throw Problem(predicate: "is not valid JSON: \(error)")
        }
        let check = JSONSchemaValidator.checkSchema(value)
        if let first = check.errors.first {
            throw Problem(predicate: "is not a valid JSON Schema: \(first.description)")
        }
        do {
            return try JSONSchemaValidator(schema: value, options: options)
        } catch {
            throw Problem(predicate: "cannot be used: \(error.message)")
        }
    }

    /// The violations of `value` (a key's value, or a prefix's document) against `validator`.
    /// For a prefix's document, each violation is placed in the key its member belongs to
    /// when there is one among `keys`.
    public static func violations(of value: JSONValue, against validator: JSONSchemaValidator, target: SchemaTarget, keys: Set<Key> = []) -> [SchemaViolation] {
        let result = validator.validate(value)
        guard !result.isValid else { return [] }
        return result.errors.map { error in
            let (key, pointer) = place(error.instanceLocation, target: target, keys: keys)
            // A validation stopped by its budget names no keyword: it is the schema's limit.
            return SchemaViolation(key: key, pointer: pointer, keyword: error.keyword.isEmpty ? "limit" : error.keyword, message: error.message, schema: target.path)
        }
    }

    /// The key and the pointer inside it for an instance location in a target's value.
    private static func place(_ location: String, target: SchemaTarget, keys: Set<Key>) -> (String, String) {
        guard case .prefix(let prefix) = target, let pointer = try? JSONPointer(location) else { return (target.path, location) }
        let tokens = pointer.tokens
        var count = tokens.count
        while count > 0 {
            if let key = try? Key(prefix.path + tokens[..<count].joined(separator: "/")), keys.contains(key) {
                return (key.path, JSONPointer(tokens: Array(tokens[count...])).description)
            }
            count -= 1
        }
        return (prefix.path, location)
    }

    /// The error for a change refused for `violations`.
    public static func refusal(_ violations: [SchemaViolation]) -> DiscfgError {
        let first = violations.first.map(\.description) ?? "a schema refused the change"
        let more = violations.count > 1 ? " (and \(violations.count - 1) more)" : ""
        return DiscfgError(.schemaViolation, "schema violation, nothing was changed: \(first)\(more)", field: "value", violations: violations)
    }
}

/// A schema attached or removed, and the keys that break it when it was attached anyway.
public struct SchemaChange: Hashable, Sendable {
    /// The change of the schema's key.
    public var event: Event
    /// What breaks the schema now (only for a schema attached with `force`).
    public var violations: [SchemaViolation]

    /// Creates a result.
    public init(event: Event, violations: [SchemaViolation]) {
        self.event = event
        self.violations = violations
    }
}

extension ChangeTransaction {
    /// The live schemas of the config, with this transaction's changes.
    func schemas() throws -> [(target: SchemaTarget, item: Item)] {
        try storedSchemaItems().compactMap { item in
            guard !item.isExpired(at: now), let target = SchemaTarget(storageKey: item.key) else { return nil }
            return (target, item)
        }
    }

    /// Checks a change before it commits: flag sets under `/flags/` are ones flagd accepts and
    /// share no flag key (``enforceFlagSets(_:)``); a key whose content type is JSON holds JSON;
    /// `/.discfg/` holds only valid schemas; and every value and prefix document the change
    /// touches (or a schema it writes now covers) meets its schema.
    /// - Parameters:
    ///   - forcing: a schema key written with `force`: what it covers is not checked.
    ///   - known: JSON values the change holds already parsed, by key.
    /// - Throws: `invalidArgument` for invalid JSON or an invalid schema, `tooLarge` for a
    ///   prefix document past ``Limits/maxSchemaDocumentBytes``, and `schemaViolation`
    ///   listing every violation.
    mutating func enforce(_ events: [Event], forcing: Key? = nil, parsed known: [Key: JSONValue] = [:]) throws {
        try refuseWritesUnderRunningDeployments(events)
        try enforceFlagSets(events)
        // Values the change already parsed (`known`: a patch's results) or parsed here are
        // not parsed again for their schemas.
        var parsed = known
        for index in events.indices where events[index].kind == .put {
            // Read in place: a loop over the events would copy each.
            guard let item = events[index].item else { continue }
            let key = events[index].key
            if SchemaTarget.isReserved(key) {
                guard let target = SchemaTarget(storageKey: key) else {
                    throw DiscfgError.invalid("key", "\(key) is reserved for discfg's own records; attach a schema with `discfg schema set`")
                }
                _ = try SchemaBook.validator(item.value, for: target)
            } else if JSONContent.isJSON(item.contentType), parsed[key] == nil {
                parsed[key] = try JSONContent.parse(item.value, key: key)
            }
        }
        let schemas = try schemas()
        guard !schemas.isEmpty else { return }
        let checks = SchemaChecks(events: events, schemas: schemas, forcing: forcing)
        var written: [Key: Item?] = [:]
        for event in events { written[event.key] = .some(event.item) }
        let violations = try violations(checks.targets, schemas: schemas, written: written, parsed: parsed)
        if !violations.isEmpty { throw SchemaBook.refusal(violations) }
    }

    /// The violations of the values and documents `targets` names, as they are in this
    /// transaction and once their keys with a TTL or an etcd lease are gone; `written` and
    /// `parsed` are what the change wrote and what of it was already parsed, so neither is
    /// read or parsed again.
    /// - Throws: `tooLarge` for a prefix whose document is past
    ///   ``Limits/maxSchemaDocumentBytes``.
    func violations(
        _ targets: [SchemaTarget], schemas: [(target: SchemaTarget, item: Item)], written: [Key: Item?] = [:], parsed: [Key: JSONValue] = [:]
    ) throws -> [SchemaViolation] {
        var found: [SchemaViolation] = []
        for target in targets {
            guard let schema = schemas.first(where: { $0.target == target }) else { continue }
            let validator = try SchemaBook.validator(schema.item.value, for: target)
            switch target {
            case .key(let key):
                guard let item = try written[key] ?? storedItem(key), !item.isExpired(at: now) else { continue }
                guard let value = parsed[key] ?? (try? JSONParser.parse(Array(item.value))) else {
                    found.append(SchemaViolation(key: key.path, pointer: "", keyword: "type", message: "value is not JSON, and its schema requires JSON", schema: key.path))
                    continue
                }
                found += SchemaBook.violations(of: value, against: validator, target: target)
            case .prefix(let prefix):
                try checkSchemaDocumentBudget(prefix)
                let items = try storedItems(under: prefix).filter { !$0.isExpired(at: now) }
                let document: JSONValue
                do {
                    document = try KeyDocument.read(items, under: prefix, parsed: parsed)
                } catch let error as DiscfgError {
                    found.append(SchemaViolation(key: prefix.path, pointer: "", keyword: "document", message: error.message, schema: prefix.path))
                    continue
                }
                let broken = SchemaBook.violations(of: document, against: validator, target: target, keys: Set(items.map(\.key)))
                // The document as it is meets the schema: it must also once its keys
                // with a TTL or lease are gone.
                found += broken.isEmpty ? violationsOnceGone(prefix, items: items, against: validator, written: written, parsed: parsed) : broken
            }
        }
        return found
    }
}

/// Which schemas a change must be checked against.
struct SchemaChecks {
    /// The targets to check, each once, in order.
    var targets: [SchemaTarget] = []

    init(events: [Event], schemas: [(target: SchemaTarget, item: Item)], forcing: Key?) {
        var seen = Set<SchemaTarget>()
        func add(_ target: SchemaTarget) {
            if seen.insert(target).inserted { targets.append(target) }
        }
        for event in events where event.kind != .expire {
            if let target = SchemaTarget(storageKey: event.key) {
                // A schema written: what it covers must meet it (unless forced).
                if event.item != nil, event.key != forcing { add(target) }
                continue
            }
            for schema in schemas where schema.target.covers(event.key) {
                // A key's own schema checks its value; a deleted key leaves nothing to check.
                if case .key = schema.target, event.item == nil { continue }
                add(schema.target)
            }
        }
    }
}
