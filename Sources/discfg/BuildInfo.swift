/// What this binary is: discfg's version and, for a release, the commit and time it was
/// built from.
///
/// The version number lives here and nowhere else (`scripts/release` reads it from this
/// file to name its artefacts). The commit and time come from ``BuildStamp``, which
/// `scripts/release` writes into its own copy of the sources; a build from a work tree has
/// neither and says so, rather than guessing.
///
/// ```
/// discfg v0.1.0 (commit 0123456789ab, built 2026-11-26T06:00:00Z)   # a release
/// discfg v0.1.0 (development build)                                  # swift build
/// ```
enum BuildInfo {
    /// discfg's version, semantic versioning.
    static let version = "0.1.0"

    /// The full commit hash a release was built from; nil in a development build.
    static var commit: String? { BuildStamp.commit }

    /// When a release was built, ISO 8601 in UTC; nil in a development build.
    static var built: String? { BuildStamp.built }

    /// The line `discfg --version` and `discfg version` print.
    static var line: String { line(version: version, commit: commit, built: built) }

    /// The version line for any stamp: the commit cut to 12 characters (enough to name it
    /// in any repository of this size), the build time as stamped.
    static func line(version: String, commit: String?, built: String?) -> String {
        var details: [String] = []
        if let commit { details.append("commit \(commit.prefix(12))") }
        if let built { details.append("built \(built)") }
        return "discfg v\(version) (\(details.isEmpty ? "development build" : details.joined(separator: ", ")))"
    }
}
