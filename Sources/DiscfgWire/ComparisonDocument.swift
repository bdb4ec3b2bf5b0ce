import DiscfgCore
import Foundation
import DiscfgJSON

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
