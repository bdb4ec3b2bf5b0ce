import DiscfgCore

/// The one grammar of what a name is given in `DISCFG_IAM_ROLES` (an IAM principal's)
/// and in `serve --tls-client-roles` (a client certificate's), as a token carries a role
/// and its scopes: `ROLE[@SCOPE[+SCOPE…]]`, each scope a config (`demo`), a discfg key
/// prefix (`demo:/app/`) or an etcd key prefix (`demo:etcd:/registry/`) as
/// ``AccessScope`` reads it. An etcd prefix here cannot hold `+`, `,` or `=`, the lists'
/// separators.
///
/// ```swift
/// let grant = try AccessGrant.parse("write@demo:/app/+prod", entry: "CN=ci=write@demo:/app/+prod") { DiscfgError.invalid("roles", $0) }
/// ```
extension AccessGrant {
    /// Parses `ROLE[@SCOPE[+SCOPE…]]` (the role in any case).
    /// - Parameters:
    ///   - spec: the text after the name's `=`.
    ///   - entry: the whole entry, as messages quote it.
    ///   - invalid: the error of the list being read, with a message.
    /// - Throws: `invalid`'s error: an unknown role, an `@` with no scope, an empty scope
    ///   between `+`s, or a scope ``AccessScope`` refuses (a config name that is not valid,
    ///   `demo:`, `demo:app` without its `/`, `demo:/`, `demo:etcd:`), naming the entry.
    public static func parse(_ spec: Substring, entry: String, invalid: (String) -> DiscfgError) throws -> AccessGrant {
        let parts = spec.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let role = Role(rawValue: parts[0].trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw invalid("the role in \"\(entry)\" is not read, write or admin")
        }
        guard parts.count == 2 else { return AccessGrant(role: role, scopes: nil) }
        guard !parts[1].isEmpty else { throw invalid("\"\(entry)\" names no config after '@'; leave '@' out for every config") }
        var scopes: [AccessScope] = []
        for text in parts[1].split(separator: "+", omittingEmptySubsequences: false) {
            guard !text.isEmpty else { throw invalid("\"\(entry)\" has an empty scope between '+'s") }
            let scope: AccessScope
            do {
                scope = try AccessScope(String(text))
            } catch let error as DiscfgError {
                throw invalid("in \"\(entry)\": \(error.message)")
            }
            if !scopes.contains(scope) { scopes.append(scope) }
        }
        return AccessGrant(role: role, scopes: scopes)
    }
}
