import Foundation

/// Payload formats 1.0 and 2.0 ⇄ the one request and response shape the handler uses.
enum PayloadFormat {
    // MARK: Requests

    static func request(_ event: APIGatewayV1Request) throws -> GatewayRequest {
        var headers: [(String, String)] = []
        if let multi = event.multiValueHeaders, !multi.isEmpty {
            for (name, values) in multi.sorted(by: { $0.key < $1.key }) { headers += values.map { (name, $0) } }
        } else {
            headers = (event.headers ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        var pairs: [(String, String)] = []
        if let multi = event.multiValueQueryStringParameters, !multi.isEmpty {
            for (name, values) in multi.sorted(by: { $0.key < $1.key }) { pairs += values.map { (name, $0) } }
        } else {
            pairs = (event.queryStringParameters ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        // Payload 1.0 gives the path and the query decoded; the router wants them encoded.
        let query = pairs.map { percentEncoded($0.0, keeping: queryAllowed) + "=" + percentEncoded($0.1, keeping: queryAllowed) }
            .joined(separator: "&")
        return GatewayRequest(
            method: event.httpMethod.uppercased(),
            path: percentEncoded(event.path, keeping: pathAllowed),
            query: query,
            headers: headers,
            body: try body(event.body, base64: event.isBase64Encoded ?? false),
            principal: event.requestContext?.identity?.userArn.flatMap { $0.isEmpty ? nil : $0 }
        )
    }

    static func request(_ event: APIGatewayV2Request) throws -> GatewayRequest {
        var headers = (event.headers ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let cookies = event.cookies, !cookies.isEmpty {
            headers.removeAll { $0.0.lowercased() == "cookie" }
            headers.append(("cookie", cookies.joined(separator: "; ")))
        }
        var path = event.rawPath
        // A named stage (not `$default`) prefixes the path of an HTTP API.
        if let stage = event.requestContext.stage, stage != "$default", path == "/\(stage)" || path.hasPrefix("/\(stage)/") {
            path = String(path.dropFirst(stage.count + 1))
            if path.isEmpty { path = "/" }
        }
        return GatewayRequest(
            method: event.requestContext.http.method.uppercased(),
            path: percentEncoded(path, keeping: pathAllowed.union("%".utf8)),
            query: percentEncoded(event.rawQueryString ?? "", keeping: queryAllowed.union("%&=+".utf8)),
            headers: headers,
            body: try body(event.body, base64: event.isBase64Encoded ?? false),
            principal: event.requestContext.authorizer?.iam?.userArn.flatMap { $0.isEmpty ? nil : $0 }
        )
    }

    private static func body(_ text: String?, base64: Bool) throws -> Data {
        guard let text else { return Data() }
        guard base64 else { return Data(text.utf8) }
        guard let data = Data(base64Encoded: text) else {
            throw LambdaFailure(type: "discfg.BadEvent", message: "the request body is marked isBase64Encoded but is not base64")
        }
        return data
    }

    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    private static let pathAllowed = Set("/!$&'()*+,;=:@".utf8).union(unreserved)
    private static let queryAllowed = Set("!$'()*,;:@/?".utf8).union(unreserved)

    private static func percentEncoded(_ text: String, keeping allowed: Set<UInt8>) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if allowed.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return result
    }

    // MARK: Responses

    static func v1(_ response: GatewayResponse) -> APIGatewayV1Response {
        var single: [String: String] = [:]
        var multi: [String: [String]] = [:]
        for (name, value) in response.headers {
            multi[name, default: []].append(value)
            single[name] = value
        }
        let (body, base64) = encodedBody(response)
        return APIGatewayV1Response(statusCode: response.status, headers: single, multiValueHeaders: multi, body: body, isBase64Encoded: base64)
    }

    static func v2(_ response: GatewayResponse) -> APIGatewayV2Response {
        var headers: [String: String] = [:]
        var cookies: [String] = []
        for (name, value) in response.headers {
            if name.lowercased() == "set-cookie" {
                cookies.append(value)
            } else if let existing = headers[name] {
                headers[name] = existing + "," + value
            } else {
                headers[name] = value
            }
        }
        let (body, base64) = encodedBody(response)
        return APIGatewayV2Response(statusCode: response.status, headers: headers, cookies: cookies, body: body, isBase64Encoded: base64)
    }

    /// Text bodies go as they are; anything else (or text that is not UTF-8) as base64.
    private static func encodedBody(_ response: GatewayResponse) -> (String, Bool) {
        let contentType = response.headers.first { $0.0.lowercased() == "content-type" }?.1.lowercased() ?? ""
        if response.body.isEmpty { return ("", false) }
        if isTextual(contentType), let text = String(data: response.body, encoding: .utf8) { return (text, false) }
        return (response.body.base64EncodedString(), true)
    }

    static func isTextual(_ contentType: String) -> Bool {
        contentType.hasPrefix("text/") || contentType.contains("json") || contentType.contains("yaml")
            || contentType.contains("xml") || contentType.contains("javascript") || contentType.hasPrefix("application/x-www-form-urlencoded")
    }
}
