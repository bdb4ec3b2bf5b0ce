import DiscfgCore
import Foundation

/// Where a DynamoDB store is: `dynamodb://REGION/TABLE?endpoint=URL&profile=P&consistent=true`.
///
/// - `REGION` may be empty (`dynamodb:///TABLE`): the region then comes from `--region`,
///   `AWS_REGION`, `AWS_DEFAULT_REGION` or the profile, as for the AWS CLI.
/// - `TABLE` defaults to `discfg`.
/// - `endpoint` points at a local DynamoDB (`moto_server`, DynamoDB Local), e.g.
///   `http://127.0.0.1:8000`.
/// - `profile` names a profile of `~/.aws/credentials` and `~/.aws/config`.
/// - `consistent=true` makes reads of the current state strongly consistent.
///
/// ```swift
/// let location = try DynamoDBLocation(parsing: "dynamodb://eu-west-1/discfg-prod?profile=ops")
/// ```
public struct DynamoDBLocation: Hashable, Sendable, CustomStringConvertible {
    /// The region, or nil to resolve it like the AWS CLI.
    public var region: String?
    /// The table name.
    public var table: String
    /// A custom endpoint, e.g. a local DynamoDB.
    public var endpoint: URL?
    /// The credentials/config profile.
    public var profile: String?
    /// Strongly consistent reads of the current state.
    public var consistentReads: Bool

    /// The table used when the URL names none.
    public static let defaultTable = "discfg"

    /// Creates a location.
    public init(region: String? = nil, table: String = DynamoDBLocation.defaultTable, endpoint: URL? = nil, profile: String? = nil, consistentReads: Bool = false) {
        self.region = region
        self.table = table
        self.endpoint = endpoint
        self.profile = profile
        self.consistentReads = consistentReads
    }

    /// Parses `dynamodb://REGION/TABLE?…`; throws `invalidArgument` naming what is wrong.
    public init(parsing text: String) throws {
        let example = "dynamodb://us-east-1/discfg?endpoint=http://127.0.0.1:8000"
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "dynamodb" else {
            throw DiscfgError.invalid("store", "store \"\(text.debugEscaped)\" is not a DynamoDB URL such as \(example)")
        }
        let region = components.host?.lowercased() ?? ""
        if !region.isEmpty {
            guard region.count <= 32, region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
                throw DiscfgError.invalid("store", "\"\(region.debugEscaped)\" in \(text.debugEscaped) is not an AWS region such as us-east-1")
            }
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let table = path.isEmpty ? Self.defaultTable : path
        guard (3...255).contains(table.count), table.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) }) else {
            throw DiscfgError.invalid("store", "table \"\(table.debugEscaped)\" in \(text.debugEscaped) is not a DynamoDB table name (3–255 of A-Z a-z 0-9 _ . -)")
        }
        var endpoint: URL?
        var profile: String?
        var consistent = false
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "endpoint":
                if let problem = StoreLocation.portProblem(value, example: "http://127.0.0.1:8000") {
                    throw DiscfgError.invalid("store", "endpoint \"\(value.debugEscaped)\" in \(text.debugEscaped) \(problem)")
                }
                guard let url = URL(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                    throw DiscfgError.invalid("store", "endpoint \"\(value.debugEscaped)\" in \(text.debugEscaped) is not an http(s) URL such as http://127.0.0.1:8000")
                }
                endpoint = url
            case "profile":
                guard !value.isEmpty else { throw DiscfgError.invalid("store", "profile in \(text.debugEscaped) is empty") }
                profile = value
            case "consistent":
                guard let flag = ["true": true, "1": true, "false": false, "0": false][value.lowercased()] else {
                    throw DiscfgError.invalid("store", "consistent=\(value.debugEscaped) in \(text.debugEscaped) must be true or false")
                }
                consistent = flag
            default:
                throw DiscfgError.invalid("store", "unknown parameter \"\(item.name.debugEscaped)\" in \(text.debugEscaped); DynamoDB URLs take endpoint, profile and consistent")
            }
        }
        self.init(region: region.isEmpty ? nil : region, table: table, endpoint: endpoint, profile: profile, consistentReads: consistent)
    }

    public var description: String {
        var components = URLComponents()
        components.scheme = "dynamodb"
        components.host = region ?? ""
        components.path = "/" + table
        var items: [URLQueryItem] = []
        if let endpoint { items.append(URLQueryItem(name: "endpoint", value: endpoint.absoluteString)) }
        if let profile { items.append(URLQueryItem(name: "profile", value: profile)) }
        if consistentReads { items.append(URLQueryItem(name: "consistent", value: "true")) }
        if !items.isEmpty { components.queryItems = items }
        return components.string ?? "dynamodb://\(region ?? "")/\(table)"
    }
}
