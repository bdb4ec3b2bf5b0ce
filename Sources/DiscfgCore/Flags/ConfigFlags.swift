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
            throw DiscfgError.invalid("value", "\(item.key.path) is not a flag set: \(error)")
        }
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
