import Foundation
import DiscfgJSON

extension DiscfgError {
    /// This error as a caller holding `grant` may see it on `config`. A schema refusal
    /// lists only the violations of keys the caller may read; those of keys outside its
    /// scopes are left out and counted in one last entry (keyword `scope`, no key:
    /// `2 more violations outside your scopes`), and the message is made again from what is
    /// left. A caller that may read the whole config sees the error as it is, as does any
    /// other error.
    ///
    /// ```swift
    /// let grant = AccessGrant(role: .write, scopes: [try AccessScope("demo:/app/")])
    /// refusal.shown(to: grant, on: demo)   // the violations of /app/…, and a count of the rest
    /// ```
    public func shown(to grant: AccessGrant, on config: ConfigName) -> DiscfgError {
        guard code == .schemaViolation, !violations.isEmpty, !grant.allows(.read, on: config) else { return self }
        let visible = violations.filter { $0.isReadable(by: grant, on: config) }
        let hidden = violations.count - visible.count
        guard hidden > 0 else { return self }
        let count = "\(hidden) \(visible.isEmpty ? "" : "more ")violation\(hidden == 1 ? "" : "s") outside your scopes"
        var shown = self
        shown.violations = visible + [SchemaViolation(key: "", pointer: "", keyword: "scope", message: count)]
        let first = visible.first.map { "\($0.description)\(visible.count > 1 ? " (and \(visible.count - 1) more)" : ""); \(count)" }
        shown.message = "schema violation, nothing was changed: \(first ?? count)"
        return shown
    }
}

extension SchemaViolation {
    /// Whether a caller holding `grant` may read what this violation is about: the key it
    /// names, or, for a prefix's document, the member its pointer leads to (a key, or the
    /// keys under it).
    func isReadable(by grant: AccessGrant, on config: ConfigName) -> Bool {
        guard key.hasSuffix("/") else {
            return (try? Key(key)).map { grant.allows(.read, on: config, key: $0) } ?? false
        }
        let tokens = (try? JSONPointer(pointer))?.tokens ?? []
        guard !tokens.isEmpty else {
            return (try? KeyPrefix(key)).map { grant.allows(.read, on: config, keysUnder: $0) } ?? false
        }
        let path = key + tokens.joined(separator: "/")
        if let member = try? Key(path), grant.allows(.read, on: config, key: member) { return true }
        return (try? KeyPrefix(path + "/")).map { grant.allows(.read, on: config, keysUnder: $0) } ?? false
    }
}
