import DiscfgJSON

/// The flags of one config: the union of its flag sets, each flag with its set's metadata and
/// `fractional` generation.
///
/// ```swift
/// let catalog = try FlagCatalog(sets: [("/flags/web", web), ("/flags/billing", billing)])
/// let answer = FlagEvaluator().evaluate("new-ui", in: catalog, context: ["targetingKey": "u1"])
/// ```
public struct FlagCatalog: Sendable {
    /// A flag and the set it came from.
    public struct Entry: Sendable {
        /// The flag.
        public let flag: Flag
        /// The name of the set that defines it (its key in the config).
        public let setName: String
        /// That set's metadata.
        public let setMetadata: JSONObject
        /// That set's `fractional` generation.
        public let fractionalGeneration: FractionalGeneration
        /// The flag's targeting, read once for every evaluation; nil without targeting or
        /// when it is not a rule (an evaluation answers PARSE_ERROR).
        let rule: LogicRule?

        init(flag: Flag, setName: String, setMetadata: JSONObject, fractionalGeneration: FractionalGeneration) {
            self.flag = flag
            self.setName = setName
            self.setMetadata = setMetadata
            self.fractionalGeneration = fractionalGeneration
            rule = if let targeting = flag.targeting, case .object = targeting { LogicRule(targeting) } else { nil }
        }
    }

    /// Every flag by key.
    public let entries: [String: Entry]

    /// The union of `sets`, refusing a flag key that two sets define.
    ///
    /// - Throws: ``FlagSetError`` at `/flags/KEY`, naming both sets.
    public init(sets: [(name: String, set: FlagSet)]) throws(FlagSetError) {
        var entries: [String: Entry] = [:]
        for (name, set) in sets {
            for key in set.keys {
                if let earlier = entries[key] {
                    throw FlagSetError(["flags", key], "flag \"\(key)\" is defined by both \(earlier.setName) and \(name)")
                }
                entries[key] = Entry(flag: set.flags[key]!, setName: name, setMetadata: set.metadata, fractionalGeneration: set.fractionalGeneration)
            }
        }
        self.entries = entries
    }

    /// The flags of one set.
    public init(_ set: FlagSet, name: String = "") {
        // One set cannot define a key twice, so the union cannot fail.
        self = (try? FlagCatalog(sets: [(name, set)])) ?? FlagCatalog(entries: [:])
    }

    private init(entries: [String: Entry]) {
        self.entries = entries
    }
}
