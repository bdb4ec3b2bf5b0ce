import Foundation
import JSONSchema

/// The JSON form of a ``Transaction``: the body of `POST /v1/{config}/txn` and of the
/// files `discfg txn` reads.
///
/// ```json
/// {
///   "compare": [
///     {"key": "/lock", "target": "version", "result": "=", "value": 0},
///     {"prefix": "/jobs/", "target": "exists", "result": "=", "value": false}
///   ],
///   "success": [
///     {"op": "put", "key": "/lock", "value": "me", "ttl": 30},
///     {"op": "delete", "prefix": "/tmp/"}
///   ],
///   "failure": [{"op": "get", "key": "/lock"}]
/// }
/// ```
///
/// A comparison's `value` is a string for `value` (base64 with `"encoding": "base64"`), a
/// number for `version`, `createRevision` and `modRevision`, and a boolean for `exists`.
///
/// A field the document does not define, or a field given as `null`, is refused rather
/// than ignored: a misspelt `"compares"` would otherwise run `success` unconditionally.
public struct TransactionDocument: Codable, Hashable, Sendable {
    public var compare: [ComparisonDocument]?
    public var success: [OperationDocument]?
    public var failure: [OperationDocument]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case compare, success, failure
    }

    /// Reads the JSON form, refusing fields it does not define and fields given as null.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(CodingKeys.self, of: "a transaction")
        compare = try container.decodeIfPresent([ComparisonDocument].self, forKey: .compare)
        success = try container.decodeIfPresent([OperationDocument].self, forKey: .success)
        failure = try container.decodeIfPresent([OperationDocument].self, forKey: .failure)
    }

    /// The document for a transaction.
    public init(_ transaction: Transaction) {
        compare = transaction.compares.map(ComparisonDocument.init)
        success = transaction.success.map(OperationDocument.init)
        failure = transaction.failure.map(OperationDocument.init)
    }

    /// The transaction this document describes, validated.
    /// - Throws: `invalidArgument` naming the entry at fault, e.g. `success[2].key`.
    public func transaction() throws -> Transaction {
        func each<T, U>(_ list: [T]?, _ name: String, _ body: (T, String) throws -> U) throws -> [U] {
            guard let list else { return [] }
            guard list.count <= Limits.maxTransactionOperations else {
                throw DiscfgError.invalid(name, "a transaction holds at most \(Limits.maxTransactionOperations) entries in \(name), got \(list.count)")
            }
            return try list.enumerated().map { offset, element in
                let path = "\(name)[\(offset)]"
                do {
                    return try body(element, path)
                } catch let error as DiscfgError where error.field != path && !(error.field?.hasPrefix(path + ".") ?? false) {
                    // A key's, value's or TTL's own error, placed in the document.
                    throw DiscfgError(error.code, "\(path): \(error.message)", field: error.field.map { "\(path).\($0)" } ?? path)
                }
            }
        }
        let transaction = Transaction(
            compares: try each(compare, "compare") { try $0.comparison(field: $1) },
            success: try each(success, "success") { try $0.operation(field: $1) },
            failure: try each(failure, "failure") { try $0.operation(field: $1) }
        )
        try transaction.validate()
        return transaction
    }

    /// Reads a document from JSON, with errors that say where it went wrong.
    /// - Throws: `invalidArgument` for anything that is not a transaction.
    public static func decode(_ data: Data) throws -> TransactionDocument {
        do {
            return try JSONDecoder().decode(TransactionDocument.self, from: data)
        } catch let error as DiscfgError {
            throw error
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context), let DecodingError.dataCorrupted(context) {
            // Not JSON at all, or not an object: the whole body is at fault.
            guard !context.fieldPath.isEmpty else { throw DiscfgError.invalid("transaction", "transaction is not valid: \(Self.bodyProblem(context))") }
            throw DiscfgError.invalid(context.fieldPath, "transaction is not valid: \(context.fieldPath): \(context.debugDescription)")
        } catch let DecodingError.keyNotFound(key, context) {
            let path = context.fieldPath.isEmpty ? key.stringValue : context.fieldPath + "." + key.stringValue
            throw DiscfgError.invalid(path, "transaction is not valid: \(path) is missing")
        } catch {
            throw DiscfgError.invalid("transaction", "transaction is not valid JSON")
        }
    }

    /// What is wrong with a body that is not a JSON object.
    private static func bodyProblem(_ context: DecodingError.Context) -> String {
        context.underlyingError != nil
            ? "the body is not valid JSON; it must be an object such as {\"compare\": [...], \"success\": [...], \"failure\": [...]}"
            : "the body must be a JSON object such as {\"compare\": [...], \"success\": [...], \"failure\": [...]}"
    }
}

/// A field's name, whatever it is, to find fields a document does not define.
private struct FieldName: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// The object's fields as `Keys`, refusing any field that is not one of them and any
    /// field given as `null`, so that what the document does not say is never ignored.
    fileprivate func strictContainer<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type, of what: String) throws -> KeyedDecodingContainer<Keys> {
        let fields = try container(keyedBy: FieldName.self)
        for field in fields.allKeys {
            guard Keys(stringValue: field.stringValue) != nil else {
                let known = Keys.allCases.map(\.stringValue).joined(separator: ", ")
                throw DecodingError.dataCorruptedError(
                    forKey: field, in: fields, debugDescription: "unknown field \"\(field.stringValue.debugEscaped)\"; \(what) has \(known)"
                )
            }
            if try fields.decodeNil(forKey: field) {
                throw DecodingError.dataCorruptedError(forKey: field, in: fields, debugDescription: "\(field.stringValue) is null; leave it out instead")
            }
        }
        return try container(keyedBy: Keys.self)
    }
}

extension DecodingError.Context {
    /// The path of the field at fault, e.g. `success[1].key`.
    fileprivate var fieldPath: String {
        var path = ""
        for key in codingPath {
            if let index = key.intValue { path += "[\(index)]" } else { path += (path.isEmpty ? "" : ".") + key.stringValue }
        }
        return path
    }
}

/// The JSON form of a ``Comparison``.
public struct ComparisonDocument: Codable, Hashable, Sendable {
    /// The key compared (or `prefix`).
    public var key: String?
    /// Every key under this prefix is compared (or `key`).
    public var prefix: String?
    /// Every key from this path on (inclusive) is compared, up to `to` (or `key`).
    public var from: String?
    /// With `from`: the first path after the range (exclusive); absent for no end.
    public var to: String?
    /// `value`, `version`, `createRevision`, `modRevision` or `exists`.
    public var target: String
    /// `=`, `!=`, `<` or `>`.
    public var result: String
    /// The operand, typed by the target.
    public var value: Operand
    /// `base64` for a binary `value` operand.
    public var encoding: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case key, prefix, from, to, target, result, value, encoding
    }

    /// Reads the JSON form, refusing fields it does not define and fields given as null.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(CodingKeys.self, of: "a comparison")
        key = try container.decodeIfPresent(String.self, forKey: .key)
        prefix = try container.decodeIfPresent(String.self, forKey: .prefix)
        from = try container.decodeIfPresent(String.self, forKey: .from)
        to = try container.decodeIfPresent(String.self, forKey: .to)
        target = try container.decode(String.self, forKey: .target)
        result = try container.decode(String.self, forKey: .result)
        value = try container.decode(Operand.self, forKey: .value)
        encoding = try container.decodeIfPresent(String.self, forKey: .encoding)
    }

    /// A comparison's operand as JSON has it.
    public enum Operand: Codable, Hashable, Sendable {
        case text(String)
        case number(UInt64)
        case flag(Bool)

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else if let number = try? container.decode(UInt64.self) {
                self = .number(number)
            } else if let text = try? container.decode(String.self) {
                self = .text(text)
            } else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "a comparison's value is a string, a whole number from 0 to \(Revision.max), or true/false"
                )
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            case .flag(let flag): try container.encode(flag)
            }
        }
    }

    /// The document for a comparison.
    public init(_ comparison: Comparison) {
        switch comparison.subject {
        case .key(let key): self.key = key.path
        case .prefix(let prefix): self.prefix = prefix.path
        case .range(let range): (from, to) = (range.lower, range.upperPath)
        }
        target = comparison.target.name
        result = comparison.relation.rawValue
        switch comparison.target {
        case .value(let data):
            let (text, encoding) = ValueEncoding.encode(data)
            value = .text(text)
            self.encoding = encoding
        case .version(let version): value = .number(version)
        case .createRevision(let revision), .modRevision(let revision): value = .number(revision.rawValue)
        case .exists(let exists): value = .flag(exists)
        }
    }

    /// The comparison this document describes; `field` names it in errors.
    public func comparison(field: String) throws -> Comparison {
        let subject: Comparison.Subject
        switch (key, prefix, try KeyRange(from: from, to: to, field: field)) {
        case (let key?, nil, nil): subject = .key(try Key(key))
        case (nil, let prefix?, nil): subject = .prefix(try KeyPrefix(prefix))
        case (nil, nil, let range?): subject = .range(range)
        default: throw DiscfgError.invalid(field, "\(field) names a key, a prefix or a range: give exactly one of \"key\", \"prefix\" and \"from\"")
        }
        guard let relation = Comparison.Relation(rawValue: result) else {
            throw DiscfgError.invalid("\(field).result", "\(field).result is \"\(result.debugEscaped)\"; use =, !=, < or >")
        }
        if encoding != nil, target != "value" {
            throw DiscfgError.invalid("\(field).encoding", "\(field).encoding applies only to a value comparison; leave it out of a \(target.debugEscaped) comparison")
        }
        let operand: Comparison.Target
        switch (target, value) {
        case ("value", .text(let text)): operand = .value(try ValueEncoding.decode(text, encoding: encoding))
        case ("version", .number(let number)): operand = .version(number)
        case ("createRevision", .number(let number)) where number <= Revision.max.rawValue: operand = .createRevision(Revision(number))
        case ("modRevision", .number(let number)) where number <= Revision.max.rawValue: operand = .modRevision(Revision(number))
        case ("exists", .flag(let flag)): operand = .exists(flag)
        case ("value", _): throw DiscfgError.invalid("\(field).value", "\(field).value must be a string for a value comparison")
        case ("version", _), ("createRevision", _), ("modRevision", _):
            throw DiscfgError.invalid("\(field).value", "\(field).value must be a whole number from 0 to \(Revision.max) for a \(target) comparison")
        case ("exists", _): throw DiscfgError.invalid("\(field).value", "\(field).value must be true or false for an exists comparison")
        default:
            throw DiscfgError.invalid("\(field).target", "\(field).target is \"\(target.debugEscaped)\"; use value, version, createRevision, modRevision or exists")
        }
        let comparison = Comparison(subject, relation, operand)
        do { try comparison.validate() } catch let error as DiscfgError { throw DiscfgError(error.code, "\(field): \(error.message)", field: field) }
        return comparison
    }
}

/// The JSON form of a ``TransactionOperation``.
public struct OperationDocument: Codable, Hashable, Sendable {
    /// `put`, `delete` or `get`.
    public var op: String
    /// The key (or `prefix`, for `delete` and `get`).
    public var key: String?
    /// Every key under this prefix (`delete` and `get`).
    public var prefix: String?
    /// Every key from this path on (inclusive), up to `to` (`delete` and `get`).
    public var from: String?
    /// With `from`: the first path after the range (exclusive); absent for no end.
    public var to: String?
    /// The value to put.
    public var value: String?
    /// `base64` for a binary value.
    public var encoding: String?
    /// Seconds until the put key expires.
    public var ttl: Int64?
    /// The put value's media type.
    public var contentType: String?
    /// For a patch: an RFC 7386 merge patch.
    public var merge: JSONValue?
    /// For a patch: an RFC 6902 JSON patch (an array of operations).
    public var patch: JSONValue?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case op, key, prefix, from, to, value, encoding, ttl, contentType, merge, patch
    }

    /// Reads the JSON form, refusing fields it does not define and fields given as null.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(CodingKeys.self, of: "an operation")
        op = try container.decode(String.self, forKey: .op)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        prefix = try container.decodeIfPresent(String.self, forKey: .prefix)
        from = try container.decodeIfPresent(String.self, forKey: .from)
        to = try container.decodeIfPresent(String.self, forKey: .to)
        value = try container.decodeIfPresent(String.self, forKey: .value)
        encoding = try container.decodeIfPresent(String.self, forKey: .encoding)
        do {
            ttl = try container.decodeIfPresent(Int64.self, forKey: .ttl)
        } catch where !(error is DecodingError) {
            // Foundation reports 1.5 or 1e30 for an integer with an error of its own that
            // the decoder, up the stack, turns into "not valid JSON" without saying where.
            throw DecodingError.dataCorruptedError(forKey: .ttl, in: container, debugDescription: "ttl must be a whole number of seconds from 1 to \(Limits.maxTTLSeconds)")
        }
        contentType = try container.decodeIfPresent(String.self, forKey: .contentType)
        merge = try container.decodeIfPresent(JSONValue.self, forKey: .merge)
        patch = try container.decodeIfPresent(JSONValue.self, forKey: .patch)
    }

    /// The document for an operation.
    public init(_ operation: TransactionOperation) {
        switch operation {
        case .put(let key, let data, let ttlSeconds, let contentType):
            op = "put"
            self.key = key.path
            let (text, encoding) = ValueEncoding.encode(data)
            value = text
            self.encoding = encoding
            ttl = ttlSeconds
            self.contentType = contentType
        case .patch(let key, let patch):
            op = "patch"
            self.key = key.path
            switch patch {
            case .merge(let value): merge = value
            case .json: self.patch = patch.document
            }
        case .delete(let key): op = "delete"; self.key = key.path
        case .deletePrefix(let prefix): op = "delete"; self.prefix = prefix.path
        case .get(let key): op = "get"; self.key = key.path
        case .getPrefix(let prefix): op = "get"; self.prefix = prefix.path
        case .deleteRange(let range): op = "delete"; (from, to) = (range.lower, range.upperPath)
        case .getRange(let range): op = "get"; (from, to) = (range.lower, range.upperPath)
        }
    }

    /// The operation this document describes; `field` names it in errors.
    public func operation(field: String) throws -> TransactionOperation {
        if op != "patch", let extra = [("merge", merge != nil), ("patch", patch != nil)].first(where: \.1)?.0 {
            throw DiscfgError.invalid("\(field).\(extra)", "\(field) is a \(op.debugEscaped), which takes no \"\(extra)\"; only a patch does")
        }
        if op == "patch" {
            return try patchOperation(field: field)
        }
        if op == "delete" || op == "get", let extra = [("value", value != nil), ("encoding", encoding != nil), ("ttl", ttl != nil), ("contentType", contentType != nil)].first(where: \.1)?.0 {
            throw DiscfgError.invalid("\(field).\(extra)", "\(field) is a \(op), which takes no \"\(extra)\"; only a put does")
        }
        if let range = try KeyRange(from: from, to: to, field: field) {
            guard key == nil, prefix == nil else {
                throw DiscfgError.invalid(field, "\(field) names a key, a prefix or a range: give exactly one of \"key\", \"prefix\" and \"from\"")
            }
            switch op {
            case "delete": return .deleteRange(range)
            case "get": return .getRange(range)
            case "put": throw DiscfgError.invalid(field, "\(field) is a put: give \"key\" (a put takes no range)")
            default: throw DiscfgError.invalid("\(field).op", "\(field).op is \"\(op.debugEscaped)\"; use put, patch, delete or get")
            }
        }
        switch (op, key, prefix) {
        case ("put", let key?, nil):
            guard let value else { throw DiscfgError.invalid("\(field).value", "\(field) puts \(key.debugEscaped) but gives no \"value\"") }
            let data = try ValueEncoding.decode(value, encoding: encoding)
            try Limits.validateValue(data)
            let operation = TransactionOperation.put(try Key(key), data, ttlSeconds: ttl, contentType: contentType)
            if let ttl { try Limits.validateTTL(seconds: ttl) }
            if let contentType { try Limits.validateContentType(contentType) }
            return operation
        case ("put", _, _): throw DiscfgError.invalid(field, "\(field) is a put: give \"key\" (a put takes no prefix)")
        case ("delete", let key?, nil): return .delete(try Key(key))
        case ("delete", nil, let prefix?): return .deletePrefix(try KeyPrefix(prefix))
        case ("get", let key?, nil): return .get(try Key(key))
        case ("get", nil, let prefix?): return .getPrefix(try KeyPrefix(prefix))
        case ("delete", _, _), ("get", _, _): throw DiscfgError.invalid(field, "\(field) names a key or a prefix: give exactly one of \"key\" and \"prefix\"")
        default: throw DiscfgError.invalid("\(field).op", "\(field).op is \"\(op.debugEscaped)\"; use put, patch, delete or get")
        }
    }

    /// A patch: a key and exactly one of `merge` and `patch`.
    private func patchOperation(field: String) throws -> TransactionOperation {
        if let extra = [("prefix", prefix != nil), ("from", from != nil), ("to", to != nil), ("value", value != nil), ("encoding", encoding != nil), ("ttl", ttl != nil), ("contentType", contentType != nil)].first(where: \.1)?.0 {
            throw DiscfgError.invalid("\(field).\(extra)", "\(field) is a patch, which takes no \"\(extra)\": give \"key\" and one of \"merge\" and \"patch\"")
        }
        guard let key else { throw DiscfgError.invalid("\(field).key", "\(field) is a patch: give the \"key\" it patches") }
        switch (merge, patch) {
        case (let merge?, nil): return .patch(try Key(key), .merge(merge))
        case (nil, let patch?): return .patch(try Key(key), try ValuePatch(jsonPatch: patch))
        default: throw DiscfgError.invalid(field, "\(field) is a patch: give exactly one of \"merge\" (RFC 7386) and \"patch\" (RFC 6902)")
        }
    }
}

/// The JSON form of one ``TransactionResponse``, in an envelope's `responses`.
public struct TransactionResponseDocument: Codable, Hashable, Sendable {
    /// `put`, `delete` or `get`.
    public var op: String
    /// For a put: the item written.
    public var item: ItemDocument?
    /// For a put: the item before, when the key existed.
    public var prevItem: ItemDocument?
    /// For a delete: the items deleted.
    public var prevItems: [ItemDocument]?
    /// For a get: the items read.
    public var items: [ItemDocument]?

    /// The document for a response.
    public init(_ response: TransactionResponse) {
        switch response {
        case .put(let event):
            op = "put"
            item = event.item.map(ItemDocument.init)
            prevItem = event.prevItem.map(ItemDocument.init)
        case .delete(let events):
            op = "delete"
            prevItems = events.compactMap { $0.prevItem.map(ItemDocument.init) }
        case .get(let found):
            op = "get"
            items = found.map(ItemDocument.init)
        }
    }
}

extension KeyRange {
    /// The range a document's `from` and `to` give, or nil when it gives neither.
    /// - Throws: `invalidArgument` for a `to` without a `from`, or a path that is not one.
    init?(from: String?, to: String?, field: String) throws {
        guard let from else {
            if to != nil { throw DiscfgError.invalid("\(field).to", "\(field) gives \"to\" without \"from\"; a range starts at \"from\"") }
            return nil
        }
        for (name, path) in [("from", from), ("to", to)] {
            guard let path else { continue }
            guard path.hasPrefix("/"), path.utf8.count <= Key.maxBytes + 1, path.unicodeScalars.allSatisfy({ $0.properties.generalCategory != .control }) else {
                throw DiscfgError.invalid("\(field).\(name)", "\(field).\(name) \"\(path.debugEscaped)\" is not a path: it starts with / and holds at most \(Key.maxBytes) bytes and no control characters")
            }
        }
        self.init(lower: from, upper: to)
    }
}
