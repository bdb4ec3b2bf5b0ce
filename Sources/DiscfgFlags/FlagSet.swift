import DiscfgJSON

/// A flagd flag set (schema v0): `{"flags": {…}, "$evaluators": {…}, "metadata": {…}}`.
///
/// Parsing checks what flagd's reference evaluator checks and resolves every
/// `{"$ref": "name"}` in targeting to `$evaluators.name` (evaluators may refer to each other;
/// a cycle or an unknown name is refused). A refusal is a ``FlagSetError`` naming the member.
///
/// The flag set's metadata member ``fractionalGenerationKey`` selects how `fractional`
/// hashes (see ``FractionalGeneration``): `"fractionalGeneration": "utf8"` keeps the buckets of
/// flagd releases that hash `flagKey + targetingKey`; absent or `"cbor"` is the current
/// generation.
///
/// ```swift
/// let set = try FlagSet(parsing: JSONParser.parse(#"{"flags": {"new-ui": {"state": "ENABLED",
///     "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}"#))
/// ```
public struct FlagSet: Sendable, Equatable {
    /// The flag-set metadata member that selects the `fractional` generation.
    public static let fractionalGenerationKey = "fractionalGeneration"

    /// The flags by key.
    public let flags: [String: Flag]
    /// The flag keys in document order.
    public let keys: [String]
    /// The set's metadata (flag metadata wins over it when evaluated).
    public let metadata: JSONObject
    /// How `fractional` hashes in this set's flags.
    public let fractionalGeneration: FractionalGeneration

    /// Parses a flag set document.
    ///
    /// - Throws: ``FlagSetError`` naming the first member flagd would refuse.
    public init(parsing document: JSONValue) throws(FlagSetError) {
        guard case .object(let root) = document else { throw FlagSetError([], "a flag set must be a JSON object") }
        let evaluators: JSONObject
        switch root["$evaluators"] {
        case nil, .null?: evaluators = JSONObject()
        case .object(let object)?: evaluators = object
        default: throw FlagSetError(["$evaluators"], "$evaluators must be an object of named rules")
        }
        metadata = try Self.metadata(root["metadata"] ?? .object(JSONObject()), at: ["metadata"], strict: true)
        switch metadata[Self.fractionalGenerationKey] {
        case nil: fractionalGeneration = .canonicalCBOR
        case .string(let name)? where FractionalGeneration(rawValue: name) != nil: fractionalGeneration = FractionalGeneration(rawValue: name)!
        default:
            throw FlagSetError(["metadata", Self.fractionalGenerationKey], "fractionalGeneration must be \"cbor\" (current) or \"utf8\" (previous)")
        }
        guard case .object(let flagObject) = root["flags"] ?? .object(JSONObject()) else {
            throw FlagSetError(["flags"], "flags must be an object of flags by key")
        }
        var resolver = ReferenceResolver(evaluators: evaluators)
        var flags: [String: Flag] = [:]
        for (key, value) in flagObject {
            let path = ["flags", key]
            var resolved = value
            if case .object(var members) = value, let targeting = members["targeting"] {
                members["targeting"] = try resolver.resolve(targeting, at: path + ["targeting"])
                resolved = .object(members)
            }
            flags[key] = try Flag(key: key, parsing: resolved, at: path)
        }
        self.flags = flags
        self.keys = flagObject.keys
    }

    /// Parses a flag set from JSON text.
    ///
    /// - Throws: ``FlagSetError`` (at the root for text that is not JSON).
    public init(parsing text: String) throws(FlagSetError) {
        let document: JSONValue
        do { document = try JSONParser.parse(text) } catch { throw FlagSetError([], "not JSON: \(error)") }
        try self.init(parsing: document)
    }

    /// Metadata as flagd reads it: an object of strings, numbers and booleans under non-empty
    /// names. `strict` is the set's own (always an object); a flag's may be a false-like
    /// value, which flagd reads as none.
    static func metadata(_ value: JSONValue?, at path: [String], strict: Bool = false) throws(FlagSetError) -> JSONObject {
        guard let value else { return JSONObject() }
        guard case .object(let object) = value else {
            if !strict, !value.isPresent { return JSONObject() }
            throw FlagSetError(path, "metadata must be an object")
        }
        for (name, member) in object {
            guard !name.isEmpty else { throw FlagSetError(path + [name], "metadata names must not be empty") }
            switch member {
            case .string, .number, .bool: continue
            default: throw FlagSetError(path + [name], "metadata values must be strings, numbers or booleans")
            }
        }
        return object
    }
}
