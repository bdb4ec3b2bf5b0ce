import DiscfgCore
import Foundation

/// Which store to use, named by one URL (`--store` or `DISCFG_STORE`).
///
/// - `sqlite:///absolute/path.db` or `sqlite:relative/path.db`: the embedded store
///   (default `$XDG_DATA_HOME/discfg/discfg.db`, i.e. `~/.local/share/discfg/discfg.db`)
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
            if rest.hasPrefix("//") { rest.removeFirst(2) }
            if let query = rest.firstIndex(of: "?") { rest = String(rest[..<query]) }
            guard !rest.isEmpty else {
                throw DiscfgError.invalid("store", "store \"\(text.debugEscaped)\" names no file; use sqlite:///path/to/file.db")
            }
            self = .sqlite(path: rest.removingPercentEncoding ?? rest)
        case "memory":
            self = .memory
        case "dynamodb":
            self = .dynamodb(try DynamoDBLocation(parsing: trimmed))
        case "http", "https":
            guard let url = URL(string: trimmed), let host = url.host, !host.isEmpty else {
                throw DiscfgError.invalid("store", "store \"\(text.debugEscaped)\" is not a server address such as http://127.0.0.1:8899")
            }
            self = .server(url)
        default:
            throw DiscfgError.invalid(
                "store",
                "store \"\(text.debugEscaped)\" has unknown scheme \"\(scheme)\"; this build supports \(Self.supportedSchemes.map { "\($0):" }.joined(separator: ", "))"
            )
        }
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
