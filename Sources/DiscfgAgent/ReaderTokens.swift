import DiscfgAPI
import DiscfgCore
import Foundation

/// The bearer tokens a `discfg agent` takes from its readers (`--reader-token-file`): a
/// read-only ``TokenStore`` over a file, so the agent's server checks them as any discfg
/// server checks tokens (by SHA-256, compared in constant time) and answers 401 to a
/// request without one of them.
///
/// The file holds one token a line (blank lines and lines starting with `#` aside), each
/// in the form `discfg token create` prints, `dcfg_<12 hex digits>_<secret>`, with a
/// secret of at least ``minimumSecretLength`` characters. Like a key file it must be a
/// regular file of the agent's user (or root) that no other user can read or write (0600):
/// a file others can read gives them the tokens, one they can write lets them add their own.
///
/// ```swift
/// let tokens = try ReaderTokens(path: "/etc/discfg/readers")
/// let authenticator = Authenticator(mode: .required, store: tokens)
/// ```
public struct ReaderTokens: TokenStore {
    /// The file.
    public let path: String
    /// A record per token, each with the read role over every config the agent holds.
    public let records: [AccessToken]

    /// The fewest characters a token's secret (after its id) may have.
    public static let minimumSecretLength = 32
    /// The largest file read.
    static let maxBytes = 64 * 1024

    /// Reads the tokens at `path`.
    /// - Throws: `invalidArgument` (field `--reader-token-file`) naming the file, and the
    ///   line when one is not a token: missing, not a regular file, another user's, open
    ///   to other users, too large, empty, or a token twice.
    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw Self.invalid("\(path) cannot be read: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw Self.invalid("\(path) is not a regular file") }
        let user = geteuid()
        guard status.st_uid == user || status.st_uid == 0 else {
            throw Self.invalid(
                "\(path) belongs to uid \(status.st_uid), not to the agent's user (uid \(user)) or root: whoever owns it decides who reads; chown \(user) \(path)")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw Self.invalid(
                "\(path) is open to other users (mode \(String(status.st_mode & 0o777, radix: 8))): they could read the tokens or add their own; chmod 600 \(path)")
        }
        guard status.st_size <= off_t(Self.maxBytes) else { throw Self.invalid("\(path) is larger than \(Self.maxBytes / 1024) KiB; it holds one token a line") }
        let data = FileHandle(fileDescriptor: fd, closeOnDealloc: false).readDataToEndOfFile()
        records = try Self.parse(String(decoding: data, as: UTF8.self), path: path, createdAt: Date(timeIntervalSince1970: TimeInterval(status.st_mtim.tv_sec)))
    }

    /// The records of the tokens in `text`, one a line.
    static func parse(_ text: String, path: String, createdAt: Date) throws -> [AccessToken] {
        var records: [AccessToken] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let place = "line \(index + 1) of \(path)"
            guard let id = TokenFormat.id(of: line), line.count - "dcfg_".count - id.count - 1 >= minimumSecretLength,
                  !line.contains(where: \.isWhitespace)
            else {
                throw invalid(
                    "\(place) is not a token: each line holds one, dcfg_<12 hex digits>_<secret of \(minimumSecretLength) or more characters>, as 'discfg token create' prints")
            }
            guard !records.contains(where: { $0.id == id }) else { throw invalid("\(place) repeats the id \(id) of an earlier token") }
            records.append(AccessToken(id: id, hash: TokenFormat.hash(line), role: .read, scopes: nil, description: "reader token from \(path)", createdAt: createdAt))
        }
        guard !records.isEmpty else { throw invalid("\(path) holds no token (one a line, dcfg_<12 hex digits>_<secret>)") }
        return records
    }

    private static func invalid(_ problem: String) -> DiscfgError {
        DiscfgError.invalid("--reader-token-file", "--reader-token-file \(problem)")
    }

    private func readOnly() -> DiscfgError {
        DiscfgError.invalid("tokens", "the agent's reader tokens are the lines of \(path); edit the file and restart the agent")
    }

    public func saveToken(_ token: AccessToken) async throws { throw readOnly() }
    public func token(id: String) async throws -> AccessToken? { records.first { $0.id == id } }
    public func listTokens() async throws -> [AccessToken] { records }
    public func revokeToken(id: String) async throws { throw readOnly() }
    public func tokensWereIssued() async throws -> Bool { true }
    public func forgetIssuedTokens() async throws { throw readOnly() }
}
