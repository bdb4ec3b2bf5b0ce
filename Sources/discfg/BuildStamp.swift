// scripts/release replaces this file, in the copy of the sources it builds a release from,
// with the commit and time of that build. This committed form is a development build's.

/// The commit and time a release was built from: both nil here, in a build from a work
/// tree, where no script ran to record them.
enum BuildStamp {
    /// The full commit hash.
    static let commit: String? = nil
    /// The build time, ISO 8601 in UTC (`2026-11-26T06:00:00Z`).
    static let built: String? = nil
}
