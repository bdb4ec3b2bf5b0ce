import DiscfgCore
import Foundation

/// Which store to use, named by one URL (`--store` or `DISCFG_STORE`).
///
/// - `sqlite:///absolute/path.db` or `sqlite:relative/path.db`: the embedded store
///   (default `$XDG_DATA_HOME/discfg/discfg.db`, i.e. `~/.local/share/discfg/discfg.db`);
///   `sqlite://name/…` is refused, as `name` would be a host
/// - `memory:`: nothing is kept after the process ends (tests and demos)
/// - `http://host:8899`, `https://…`: a discfg server
/// - `dynamodb://REGION/TABLE?endpoint=URL&profile=P&consistent=true`: a DynamoDB table
///   (see ``DynamoDBLocation``)
public enum StoreLocation: Hashable, Sendable, CustomStringConvertible {
    /// A SQLite file.
    case sqlite(path: String)
    /// This process's memory.
    case memory
    /// A discfg server (`discfg serve`, or the API behind API Gateway).
    case server(URL)
    /// A DynamoDB table.
    case dynamodb(DynamoDBLocation)

    /// The schemes this build understands, for error messages and help.
    public static let supportedSchemes = ["sqlite", "memory", "http", "https", "dynamodb"]

    /// Parses a store URL; throws `invalidArgument` explaining the accepted forms.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let colon = trimmed.firstIndex(of: ":") else {
            throw DiscfgError.invalid("store", "store \"\(text.debugEscaped)\" is not a URL; use sqlite:///path/to/file.db or memory:")
        }
        let scheme = trimmed[..<colon].lowercased()
        var rest = String(trimmed[trimmed.index(after: colon)...])
        switch scheme {
        case "sqlite":
            // One rule, as for file: URLs: after `//` comes a host, and SQLite has none, so
            // `sqlite://tmp/x.db` is refused rather than read as ./tmp/x.db or /tmp/x.db.
            if rest.hasPrefix("//") {
                rest.removeFirst(2)
                if let first = rest.first, !"/?#".contains(first) {
                    let host = String(rest.prefix { $0 != "/" }).debugEscaped, path = rest.debugEscaped
                    throw DiscfgError.invalid(
                        "store",
                        "store \"\(text.debugEscaped)\" names \"\(host)\" as a host, and a SQLite store has none: write sqlite:///\(path) for /\(path), or sqlite:\(path) for a path relative to the current folder"
                    )
                }
            }
            // A parameter would be ignored (SQLite's own URI parameters are not passed on):
            // refused rather than dropped, so `?mode=ro` never writes.
            let parameters = rest.firstIndex { $0 == "?" || $0 == "#" }
            if let parameters { rest = String(rest[..<parameters]) }
            guard !rest.isEmpty else {
                throw DiscfgError.invalid("store", "store \"\(text.debugEscaped)\" names no file; use sqlite:///path/to/file.db")
            }
            guard parameters == nil else {
                throw DiscfgError.invalid("store", "store \"\(text.debugEscaped)\" takes no parameters: a SQLite store is named by its path alone, e.g. sqlite:///path/to/file.db (escape a ? or # in the path as %3F or %23)")
            }
            self = .sqlite(path: rest.removingPercentEncoding ?? rest)
        case "memory":
            self = .memory
        case "dynamodb":
            self = .dynamodb(try DynamoDBLocation(parsing: trimmed))
        case "http", "https":
            let example = "http://127.0.0.1:8899"
            if let problem = Self.portProblem(trimmed, example: example) {
                throw DiscfgError.invalid("store", "store \"\(text.debugEscaped)\" \(problem)")
            }
            guard let url = URL(string: trimmed), let host = url.host, !host.isEmpty, rest.hasPrefix("//") else {
                throw DiscfgError.invalid("store", "store \"\(text.debugEscaped)\" is not a server address such as \(example)")
            }
            guard url.query == nil, url.fragment == nil else {
                throw DiscfgError.invalid("store", "store \"\(text.debugEscaped)\" takes no parameters: name the server alone, e.g. \(example) or https://host/prefix")
            }
            self = .server(url)
        default:
            throw DiscfgError.invalid(
                "store",
                "store \"\(text.debugEscaped)\" has unknown scheme \"\(scheme)\"; this build supports \(Self.supportedSchemes.map { "\($0):" }.joined(separator: ", "))"
            )
        }
    }

    /// What is wrong with the port of the http(s) URL `text`, or nil when it names a
    /// port from 1 to 65535 or none. Read from the text itself: Foundation's parser turns
    /// some ports past 65535 into no URL at all and takes 0, which no server listens on.
    static func portProblem(_ text: String, example: String) -> String? {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let authority = text[schemeEnd.upperBound...].prefix { !"/?#".contains($0) }
        let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority
        let afterHost: Substring
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { return nil }
            afterHost = hostAndPort[hostAndPort.index(after: close)...]
        } else {
            afterHost = hostAndPort.firstIndex(of: ":").map { hostAndPort[$0...] } ?? ""
        }
        let port = afterHost.dropFirst()
        guard afterHost.hasPrefix(":"), !port.isEmpty else { return nil }
        if port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port), (1...65535).contains(number) { return nil }
        return "has port \"\(String(port).debugEscaped)\"; a port is a number from 1 to 65535, as in \(example)"
    }

    /// The default store: `$XDG_DATA_HOME/discfg/discfg.db`.
    public static func defaultLocation(environment: [String: String]) -> StoreLocation {
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/share")
        return .sqlite(path: dataHome + "/discfg/discfg.db")
    }

    public var description: String {
        switch self {
        case .sqlite(let path): path.hasPrefix("/") ? "sqlite://\(path)" : "sqlite:\(path)"
        case .memory: "memory:"
        case .server(let url): url.absoluteString
        case .dynamodb(let location): location.description
        }
    }
}
