import DiscfgJSON

/// A subschema together with where it lives: the base URI of its resource and its JSON pointer
/// inside that resource.
struct LocatedSchema: Sendable {
    let value: JSONValue
    let base: String
    let pointer: String
    let draft: SchemaDraft
}

/// Every schema resource, anchor and embedded `$id` reachable from the root schema and the
/// registry, found once when the validator is built. Nothing is ever fetched.
struct SchemaIndex: Sendable {
    /// Resource URI (no fragment) to the resource's root.
    private(set) var resources: [String: LocatedSchema] = [:]
    /// `uri#name` to the subschema holding `$anchor`/`$dynamicAnchor` (or a draft 7 `$id: "#name"`).
    private(set) var anchors: [String: LocatedSchema] = [:]
    /// `uri#name` of every `$dynamicAnchor`.
    private(set) var dynamicAnchors: Set<String> = []
    /// `base#pointer` of a subschema with its own `$id`, to the base URI it starts.
    private(set) var embeddedBases: [String: String] = [:]
    /// Every `pattern` and `patternProperties` key, compiled.
    private(set) var patterns: [String: ECMARegex] = [:]
    /// Whether any schema uses `unevaluatedProperties`/`unevaluatedItems` (annotations are collected only then).
    private(set) var usesUnevaluated = false
    private var visited = 0

    /// Adds a document under `uri` (empty for an anonymous root).
    mutating func add(_ value: JSONValue, uri: String, draft: SchemaDraft, limit: Int) throws(SchemaError) {
        let base = Self.stripFragment(uri)
        let root = try walk(value, base: base, pointer: "", draft: draft, isRoot: true, depth: 0, limit: limit)
        // The document is reachable under the URI it was given as well as under its own `$id`.
        resources[base] = root
    }

    /// Adds what `other` indexed, keeping this index's entries where both name the same URI.
    mutating func merge(_ other: SchemaIndex) {
        resources.merge(other.resources) { mine, _ in mine }
        anchors.merge(other.anchors) { mine, _ in mine }
        dynamicAnchors.formUnion(other.dynamicAnchors)
        embeddedBases.merge(other.embeddedBases) { mine, _ in mine }
        patterns.merge(other.patterns) { mine, _ in mine }
    }

    static func stripFragment(_ uri: String) -> String {
        if let hash = uri.firstIndex(of: "#") { return String(uri[..<hash]) }
        return uri
    }

    static func escape(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        return token.replacingAll("~", with: "~0").replacingAll("/", with: "~1")
    }

    /// Indexes `value` and its subschemas; returns `value` located at the base it starts.
    @discardableResult
    private mutating func walk(_ value: JSONValue, base: String, pointer: String, draft: SchemaDraft, isRoot: Bool, depth: Int, limit: Int) throws(SchemaError) -> LocatedSchema {
        visited += 1
        guard depth < 256 else { throw SchemaError("schema nests deeper than 256 subschemas at \(base)#\(pointer)") }
        guard visited <= limit else { throw SchemaError("schema has more than \(limit) subschemas") }
        guard case .object(let object) = value else { return LocatedSchema(value: value, base: base, pointer: pointer, draft: draft) }
        var base = base
        var pointer = pointer
        var draft = draft
        if case .string(let uri)? = object["$schema"], let named = SchemaDraft(schemaURI: uri) { draft = named }
        let refHidesSiblings = draft == .draft7 && object["$ref"] != nil
        if case .string(let id)? = object["$id"], !refHidesSiblings {
            if draft == .draft7, id.hasPrefix("#") {
                anchors[base + id] = LocatedSchema(value: value, base: base, pointer: pointer, draft: draft)
            } else {
                let resolved = URIReference.resolve(id, against: base)
                let newBase = Self.stripFragment(resolved)
                if !isRoot { embeddedBases["\(base)#\(pointer)"] = newBase }
                base = newBase
                pointer = ""
                let located = LocatedSchema(value: value, base: base, pointer: "", draft: draft)
                resources[base] = located
                if let hash = resolved.firstIndex(of: "#"), resolved.index(after: hash) != resolved.endIndex {
                    anchors[resolved] = located
                }
            }
        }
        if draft == .draft2020_12 {
            if case .string(let name)? = object["$anchor"] {
                anchors["\(base)#\(name)"] = LocatedSchema(value: value, base: base, pointer: pointer, draft: draft)
            }
            if case .string(let name)? = object["$dynamicAnchor"] {
                anchors["\(base)#\(name)"] = LocatedSchema(value: value, base: base, pointer: pointer, draft: draft)
                dynamicAnchors.insert("\(base)#\(name)")
            }
            if object["unevaluatedProperties"] != nil || object["unevaluatedItems"] != nil { usesUnevaluated = true }
        }
        if case .string(let source)? = object["pattern"] { try compile(source) }
        if case .object(let map)? = object["patternProperties"] {
            for key in map.keys { try compile(key) }
        }
        for keyword in draft.singleSubschemaKeywords {
            if let child = object[keyword], !(keyword == "items" && draft == .draft7 && child.isArray) {
                try walk(child, base: base, pointer: pointer + "/" + keyword, draft: draft, isRoot: false, depth: depth + 1, limit: limit)
            }
        }
        for keyword in draft.subschemaMapKeywords {
            guard case .object(let map)? = object[keyword] else { continue }
            for (name, child) in map where !child.isArray {
                try walk(child, base: base, pointer: "\(pointer)/\(keyword)/\(Self.escape(name))", draft: draft, isRoot: false, depth: depth + 1, limit: limit)
            }
        }
        for keyword in draft.subschemaArrayKeywords {
            guard case .array(let items)? = object[keyword] else { continue }
            for (i, child) in items.enumerated() {
                try walk(child, base: base, pointer: "\(pointer)/\(keyword)/\(i)", draft: draft, isRoot: false, depth: depth + 1, limit: limit)
            }
        }
        return LocatedSchema(value: value, base: base, pointer: pointer, draft: draft)
    }

    private mutating func compile(_ source: String) throws(SchemaError) {
        guard patterns[source] == nil else { return }
        do {
            patterns[source] = try ECMARegex(source)
        } catch {
            throw SchemaError("pattern '\(source)' is not a valid ECMA-262 regular expression: \(error.description)")
        }
    }

    /// The subschema an absolute URI names: a resource, `resource#anchor`, or `resource#/json/pointer`.
    func resolve(_ uri: String) -> LocatedSchema? {
        guard let hash = uri.firstIndex(of: "#") else { return resources[uri] }
        let document = String(uri[..<hash])
        let fragment = String(uri[uri.index(after: hash)...])
        if fragment.isEmpty { return resources[document] }
        guard fragment.hasPrefix("/") else { return anchors[uri] }
        guard let root = resources[document] else { return nil }
        return walkPointer(fragment, from: root)
    }

    /// Follows a (percent-encoded) JSON pointer from a resource root, switching base at embedded `$id`s.
    private func walkPointer(_ fragment: String, from root: LocatedSchema) -> LocatedSchema? {
        var value = root.value
        var base = root.base
        var pointer = ""
        var draft = root.draft
        for rawToken in fragment.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            guard let decoded = String(rawToken).removingPercentEncoding else { return nil }
            let token = decoded.replacingAll("~1", with: "/").replacingAll("~0", with: "~")
            switch value {
            case .object(let object):
                guard let next = object[token] else { return nil }
                value = next
            case .array(let items):
                guard let index = Int(token), index >= 0, index < items.count, String(index) == token else { return nil }
                value = items[index]
            default:
                return nil
            }
            pointer += "/" + Self.escape(token)
            if let newBase = embeddedBases["\(base)#\(pointer)"] {
                base = newBase
                pointer = ""
                draft = resources[newBase]?.draft ?? draft
            }
        }
        return LocatedSchema(value: value, base: base, pointer: pointer, draft: draft)
    }
}

extension JSONValue {
    var isArray: Bool {
        if case .array = self { return true }
        return false
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        contains(target) ? replacing(target, with: replacement) : self
    }

    /// Percent-decoding of UTF-8 octets, nil for malformed escapes or invalid UTF-8.
    var removingPercentEncoding: String? {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var iterator = Array(utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let h = iterator.next(), let l = iterator.next(), let hi = hexNibble(h), let lo = hexNibble(l) else { return nil }
                bytes.append(hi << 4 | lo)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

private func hexNibble(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}
