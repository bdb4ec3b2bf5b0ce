/// An RFC 3986 URI reference split into its parts, enough to resolve `$id` and `$ref` values.
struct URIReference: Sendable, Equatable {
    var scheme: String?
    var authority: String?
    var path: String
    var query: String?
    var fragment: String?

    init(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains("/"), let first = rest.first, first.isLetter,
            rest[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        {
            scheme = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[..<end])
            rest = rest[end...]
        }
        path = String(rest)
    }

    init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    var text: String {
        var out = ""
        if let scheme { out += scheme + ":" }
        if let authority { out += "//" + authority }
        out += path
        if let query { out += "?" + query }
        if let fragment { out += "#" + fragment }
        return out
    }

    /// The reference resolved against `base` (RFC 3986 section 5.2.2).
    func resolved(against base: URIReference) -> URIReference {
        if scheme != nil {
            return URIReference(scheme: scheme, authority: authority, path: Self.removeDotSegments(path), query: query, fragment: fragment)
        }
        if authority != nil {
            return URIReference(scheme: base.scheme, authority: authority, path: Self.removeDotSegments(path), query: query, fragment: fragment)
        }
        if path.isEmpty {
            return URIReference(scheme: base.scheme, authority: base.authority, path: base.path, query: query ?? base.query, fragment: fragment)
        }
        let merged: String
        if path.hasPrefix("/") {
            merged = path
        } else if base.authority != nil, base.path.isEmpty {
            merged = "/" + path
        } else if let slash = base.path.lastIndex(of: "/") {
            merged = base.path[...slash] + path
        } else {
            merged = path
        }
        return URIReference(scheme: base.scheme, authority: base.authority, path: Self.removeDotSegments(merged), query: query, fragment: fragment)
    }

    static func removeDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (i, segment) in segments.enumerated() {
            let last = i == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if output.count > 1 || (output.count == 1 && !output[0].isEmpty) { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        var result = output.joined(separator: "/")
        if path.hasPrefix("/"), !result.hasPrefix("/") { result = "/" + result }
        return result
    }

    /// Resolves `reference` against `base`; both are URI reference strings.
    static func resolve(_ reference: String, against base: String) -> String {
        URIReference(reference).resolved(against: URIReference(base)).text
    }
}
