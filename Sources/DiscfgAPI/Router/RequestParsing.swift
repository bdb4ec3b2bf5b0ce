import DiscfgCore
import Foundation
import Hummingbird

/// Reading names, keys, query parameters, conditions and bodies out of requests, each
/// failure a 400 (or 413) naming the parameter.
extension Request {
    /// The `{config}` path parameter as a config name.
    func configName(_ context: some RequestContext) throws -> ConfigName {
        guard let text = configNameText(context) else { throw DiscfgError.invalid("config", "no config in the path") }
        return try ConfigName(text)
    }

    /// The `{config}` path parameter as sent, percent-decoded; nil when the route has none.
    func configNameText(_ context: some RequestContext) -> String? {
        guard let raw = context.parameters.get("config") else { return nil }
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return String(raw) }
        return raw.removingPercentEncoding ?? String(raw)
    }

    /// The rest of the path after `/v1/{config}/keys/` or `…/history/`, percent-decoded.
    /// Read from the raw path, so empty segments (`a//b`) reach key validation instead
    /// of being silently collapsed by routing.
    func pathRemainder(_ context: some RequestContext) -> String {
        let path = uri.path
        var slashes = 0
        var index = path.startIndex
        while index < path.endIndex, slashes < 4 {
            if path[index] == "/" { slashes += 1 }
            index = path.index(after: index)
        }
        let rest = path[index...]
        guard rest.utf8.contains(UInt8(ascii: "%")) else { return String(rest) }
        return rest.removingPercentEncoding ?? String(rest)
    }

    /// Whether the request path ends with a slash (a directory).
    var endsWithSlash: Bool { uri.path.utf8.count > 1 && uri.path.utf8.last == UInt8(ascii: "/") }

    /// A query parameter's value.
    func query(_ name: String) -> String? {
        uri.queryParameters.get(name)
    }

    /// A flag such as `?recursive` or `?recursive=true`.
    func flag(_ name: String) throws -> Bool {
        guard let value = uri.queryParameters.get(name) else { return false }
        // As the document has it: a flag is given bare (?recursive), true or false.
        switch value {
        case "", "true": return true
        case "false": return false
        default: throw DiscfgError.invalid(name, "\(name) is a flag: give it bare (?\(name)), or as true or false, not \"\(String(value.prefix(40)).debugEscaped)\"")
        }
    }

    /// A whole-number query parameter named and bounded by `field`; nil when absent.
    func number(_ field: NumberField) throws -> Int64? {
        guard let value = uri.queryParameters.get(field.name) else { return nil }
        return try field.parse(value)
    }

    /// A revision query parameter; nil when absent.
    func revision(_ name: String) throws -> Revision? {
        try number(.revision(name)).map { Revision(UInt64($0)) }
    }

    /// The compare-and-swap conditions of a set or delete: `If-Match`, `If-None-Match: *`,
    /// `prevValue`, `prevVersion`, `prevIndex` and `prevExist` (the latter as in etcd v2).
    func conditions() throws -> [Condition] {
        var conditions: [Condition] = []
        if let ifMatch = headers[.ifMatch] {
            if ifMatch.trimmingCharacters(in: .whitespaces) == "*" {
                conditions.append(.exists)
            } else {
                conditions.append(.modRevision(try ETag.revision(in: Substring(ifMatch), header: "If-Match")))
            }
        }
        if let ifNoneMatch = headers[.ifNoneMatch] {
            guard ifNoneMatch.trimmingCharacters(in: .whitespaces) == "*" else {
                throw DiscfgError.invalid("If-None-Match", "on a change, If-None-Match must be * (only if the key does not exist)")
            }
            conditions.append(.version(0))
        }
        if let value = query("prevValue") { conditions.append(.value(Data(value.utf8))) }
        if let version = try number(.version("prevVersion")) { conditions.append(.version(UInt64(version))) }
        if let index = try revision("prevIndex") { conditions.append(.modRevision(index)) }
        if uri.queryParameters.get("prevExist") != nil { conditions.append(try flag("prevExist") ? .exists : .version(0)) }
        return conditions
    }

    /// The body, refusing more than `limit` bytes with 413 before reading them all.
    mutating func bodyData(limit: Int) async throws -> Data {
        if let length = headers[.contentLength].flatMap(Int.init), length > limit {
            throw DiscfgError(.tooLarge, "the request body is \(length) bytes; the limit is \(limit) bytes", field: "body")
        }
        var data = Data()
        for try await buffer in body {
            guard data.count + buffer.readableBytes <= limit else {
                throw DiscfgError(.tooLarge, "the request body is over the limit of \(limit) bytes", field: "body")
            }
            data.append(contentsOf: buffer.readableBytesView)
        }
        return data
    }
}
