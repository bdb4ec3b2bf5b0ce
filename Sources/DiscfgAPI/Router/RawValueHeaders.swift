import Foundation
import HTTPTypes

/// The headers of an answer that serves a stored value as itself (`GET keys/{key}?raw`),
/// written in this one place for every path that serves one (the router's route, so
/// `serve` and Lambda alike; the event loop's ``KeyReads`` answers only the JSON form).
///
/// A stored value's content type is chosen by whoever wrote the key, and the answer comes
/// from the server's own origin, so a `text/html` or `image/svg+xml` value would run its
/// script with the server's origin in a browser sent to the URL: enough, on a server
/// without tokens, to write keys and create an admin token. So:
/// - every raw answer carries `X-Content-Type-Options: nosniff` (no browser guesses a
///   type the writer did not name) and `Content-Security-Policy: sandbox; default-src
///   'none'` (whatever a browser renders runs in an opaque origin with no script and
///   loads nothing), which cost a program reading the value nothing;
/// - every answer whose type is not on a short list of inert types is also
///   `Content-Disposition: attachment`, so a browser saves it rather than showing it.
///
/// The list names what is safe rather than what is dangerous: the types a browser renders
/// with script are many and open-ended (HTML, XHTML, SVG, any XML with a stylesheet,
/// JavaScript, PDF, and whatever tomorrow's browser adds), and a deny list that misses one
/// fails open, while a safe list that misses one only makes a download of a harmless value.
enum RawValueHeaders {
    /// `Content-Security-Policy` of every raw answer.
    static let contentSecurityPolicy = "sandbox; default-src 'none'"

    /// Media types a browser shows without running anything: plain text and data
    /// formats (shown as text), and raster images.
    static let inertTypes: Set<String> = [
        "text/plain", "text/csv", "application/json", "application/yaml", "application/x-yaml", "text/yaml",
        "application/toml", "application/octet-stream", "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
    ]

    /// The headers of a raw answer of a value served as `contentType`, besides the type
    /// itself and the entity tag.
    static func fields(for contentType: String) -> HTTPFields {
        var fields: HTTPFields = [
            .xContentTypeOptions: "nosniff",
            .contentSecurityPolicy: contentSecurityPolicy,
        ]
        if !isInert(contentType) { fields[.contentDisposition] = "attachment" }
        return fields
    }

    /// Whether a browser shows a value of `contentType` without running anything: its
    /// media type (parameters and case aside) is on ``inertTypes``, or is JSON by suffix.
    static func isInert(_ contentType: String) -> Bool {
        let media = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return inertTypes.contains(media) || (media.hasPrefix("application/") && media.hasSuffix("+json"))
    }
}
