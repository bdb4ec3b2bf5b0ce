import DiscfgFlags
import DiscfgJSON

/// Where a config keeps its feature flags, and how its flag sets become one ``FlagCatalog``.
///
/// Each key under ``prefix`` holds one flagd flag set (a JSON document); the config's flags
/// are the union of its sets, and a flag key defined by two sets is refused.
///
/// ```swift
/// let (catalog, revision) = try await store.flags(in: demo)
/// let answer = FlagEvaluator().evaluate("new-ui", in: catalog, context: ["targetingKey": "u1"])
/// ```
public enum ConfigFlags {
    /// The keys that hold flag sets: `/flags/`.
    public static let prefix = KeyPrefix(validated: "/flags/")

    /// Whether `key` holds a flag set.
    public static func holdsFlagSet(_ key: Key) -> Bool { prefix.contains(key) }

    /// The flag set stored at `item`.
    ///
    /// - Throws: ``DiscfgError`` (`invalidArgument`) naming the key and the member flagd refuses.
    public static func flagSet(_ item: Item) throws -> FlagSet {
        do {
            guard let text = item.text else { throw FlagSetError(pointer: "", message: "a flag set must be UTF-8 JSON text") }
            return try FlagSet(parsing: text)
        } catch {
            throw refusal(item.key, error)
        }
    }

    /// The flag set stored at `item`, held to what a write must meet: besides what
    /// ``flagSet(_:)`` checks, flagd's schema v0 asks that each flag's `defaultVariant`
    /// name one of its variants, that its variants be all booleans, all strings, all
    /// numbers or all objects, and that flag keys and variant names be non-empty.
    ///
    /// - Throws: ``DiscfgError`` (`invalidArgument`) naming the key and the JSON Pointer of
    ///   the member refused.
    public static func writableFlagSet(_ item: Item) throws -> FlagSet {
        let set = try flagSet(item)
        for key in set.keys {
            guard let flag = set.flags[key] else { continue }
            if let problem = problem(of: flag) {
                throw refusal(item.key, FlagSetError(pointer: JSONPointer(tokens: ["flags", key] + problem.path).description, message: problem.message))
            }
        }
        return set
    }

    /// The flag keys `item` defines, read leniently: a set stored before its rules were
    /// checked still claims its keys; a value that is no set claims none.
    static func definedKeys(_ item: Item) -> [String] {
        guard case .object(let root)? = try? JSONParser.parse(Array(item.value)), case .object(let flags)? = root["flags"] else { return [] }
        return flags.keys
    }

    /// What flagd's schema v0 refuses in `flag` that evaluation itself tolerates.
    private static func problem(of flag: Flag) -> (path: [String], message: String)? {
        if flag.key.isEmpty { return ([], "a flag key must not be empty") }
        if let name = flag.variants.keys.first(where: \.isEmpty) { return (["variants", name], "variant names must not be empty") }
        let kinds = Set(flag.variants.map { variantKind($0.value) })
        if kinds.count != 1 || kinds.contains(nil) {
            return (["variants"], "variants must be all booleans, all strings, all numbers or all objects")
        }
        if let name = flag.defaultVariant, flag.variants[name] == nil {
            return (["defaultVariant"], "defaultVariant \"\(name)\" is not one of the flag's variants (\(flag.variants.keys.joined(separator: ", ")))")
        }
        return nil
    }

    private static func variantKind(_ value: JSONValue) -> String? {
        switch value {
        case .bool: "boolean"
        case .string: "string"
        case .number: "number"
        case .object: "object"
        default: nil
        }
    }

    /// The error for a flag set refused at `key`.
    static func refusal(_ key: Key, _ error: any Error) -> DiscfgError {
        DiscfgError.invalid("value", "\(key.path) is not a flag set: \(error)")
    }

    /// The union of the flag sets in `items` (keys outside ``prefix`` are ignored), each set
    /// named by its key's path.
    ///
    /// - Throws: ``DiscfgError`` (`invalidArgument`) for a set that does not parse or a flag
    ///   key two sets define.
    public static func catalog(_ items: [Item]) throws -> FlagCatalog {
        let sets = try items.filter { holdsFlagSet($0.key) }.map { (name: $0.key.path, set: try flagSet($0)) }
        do {
            return try FlagCatalog(sets: sets)
        } catch {
            throw DiscfgError.invalid("value", "\(error.message)")
        }
    }
}

extension ConfigReading {
    /// The config's flags, from every flag set under ``ConfigFlags/prefix``, and the revision
    /// they were read at.
    public func flags(in config: ConfigName) async throws -> (catalog: FlagCatalog, revision: Revision) {
        let (items, revision) = try await items(in: config, under: ConfigFlags.prefix)
        return (try ConfigFlags.catalog(items), revision)
    }
}
