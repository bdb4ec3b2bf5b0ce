import DiscfgJSON

/// One flag of a flag set, as flagd's schema v0 defines it.
public struct Flag: Sendable, Equatable {
    /// Whether a flag answers its variants or the caller's default.
    public enum State: String, Sendable {
        /// Evaluated.
        case enabled = "ENABLED"
        /// Answers the caller's default with reason DISABLED.
        case disabled = "DISABLED"
    }

    /// The flag's key in its set.
    public let key: String
    /// ENABLED or DISABLED.
    public let state: State
    /// Variant names and their values, in document order (never empty).
    public let variants: JSONObject
    /// The variant answered when targeting gives nothing; nil sends the caller's default.
    /// A boolean `defaultVariant` names the variant `"true"` or `"false"`, as flagd reads it.
    public let defaultVariant: String?
    /// The JSON Logic rule, `$ref`s resolved; nil for a static flag (absent, or an empty or
    /// false-like value, which flagd treats as no targeting).
    public let targeting: JSONValue?
    /// The flag's own metadata (merged over the set's when evaluated).
    public let metadata: JSONObject
}

extension Flag {
    /// Members flagd reads besides the five of the schema, ignored.
    static let ignoredMembers: Set<String> = ["source", "selector"]

    init(key: String, parsing value: JSONValue, at path: [String]) throws(FlagSetError) {
        guard case .object(let object) = value else { throw FlagSetError(path, "a flag must be an object") }
        for name in object.keys where !["state", "variants", "defaultVariant", "targeting", "metadata"].contains(name) && !Self.ignoredMembers.contains(name) {
            throw FlagSetError(path + [name], "unknown member \"\(name)\" in a flag (flagd reads state, variants, defaultVariant, targeting and metadata)")
        }
        guard case .string(let stateText)? = object["state"], let state = State(rawValue: stateText) else {
            throw FlagSetError(path + ["state"], "state must be \"ENABLED\" or \"DISABLED\"")
        }
        guard case .object(let variants)? = object["variants"], !variants.isEmpty else {
            throw FlagSetError(path + ["variants"], "variants must be an object naming at least one variant")
        }
        self.key = key
        self.state = state
        self.variants = variants
        self.defaultVariant = try Self.defaultVariant(object["defaultVariant"], at: path + ["defaultVariant"])
        // Spelled out: `nil` in a closure returning JSONValue would be JSONValue.null.
        if let targeting = object["targeting"], targeting.isPresent { self.targeting = targeting } else { self.targeting = nil }
        self.metadata = try FlagSet.metadata(object["metadata"], at: path + ["metadata"])
    }

    private static func defaultVariant(_ value: JSONValue?, at path: [String]) throws(FlagSetError) -> String? {
        switch value {
        case .string(let name)?: return name.isEmpty ? nil : name
        case .bool(let b)?: return b ? "true" : "false"
        case let other?:
            // flagd reads a false-like defaultVariant (null, 0, [], {}) as none.
            if other.isPresent { throw FlagSetError(path, "defaultVariant must name a variant (a string)") }
            return nil
        case nil: return nil
        }
    }
}

extension JSONValue {
    /// Whether flagd's reference counts a member as given: null, false, 0, "", [] and {} are not.
    var isPresent: Bool {
        switch self {
        case .null: false
        case .bool(let b): b
        case .number(let n): !n.isZero
        case .string(let s): !s.isEmpty
        case .array(let items): !items.isEmpty
        case .object(let object): !object.isEmpty
        }
    }
}
