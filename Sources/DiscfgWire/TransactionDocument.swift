import DiscfgCore
import Foundation
import DiscfgJSON

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
///   "failure": [{"op": "get", "key": "/lock"}],
///   "message": "take the deploy lock"
/// }
/// ```
///
/// `message` says why, recorded with the change beside who made it (a REST request's
/// `Discfg-Message` header, or `discfg txn -m`, takes its place when given).
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
    /// Why, recorded with the change (at most ``Attribution/maxMessageBytes``).
    public var message: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case compare, success, failure, message
    }

    /// Reads the JSON form, refusing fields it does not define and fields given as null.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(CodingKeys.self, of: "a transaction")
        compare = try container.decodeIfPresent([ComparisonDocument].self, forKey: .compare)
        success = try container.decodeIfPresent([OperationDocument].self, forKey: .success)
        failure = try container.decodeIfPresent([OperationDocument].self, forKey: .failure)
        message = try container.decodeIfPresent(String.self, forKey: .message)
        if let message { try Attribution.validate(message: message) }
    }

    /// The document for a transaction.
    public init(_ transaction: Transaction) {
        compare = transaction.compares.map(ComparisonDocument.init)
        success = transaction.success.map(OperationDocument.init)
        failure = transaction.failure.map(OperationDocument.init)
        message = transaction.attribution?.message
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
    func strictContainer<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type, of what: String) throws -> KeyedDecodingContainer<Keys> {
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
