import DiscfgCore
import DiscfgWire
import Foundation

/// A function's answer to an API Gateway or Function URL event, parsed loosely enough to
/// see which fields it has.
struct GatewayResponse: Sendable {
    /// The top-level field names present.
    let fields: Set<String>
    let statusCode: Int
    let headers: [String: String]
    let multiValueHeaders: [String: [String]]?
    let cookies: [String]?
    let body: String
    let isBase64Encoded: Bool
    /// The response as it arrived.
    let raw: String

    init(_ data: Data) throws {
        raw = String(decoding: data, as: UTF8.self)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw LambdaTestFailure("the response is not a JSON object: \(raw)")
        }
        fields = Set(object.keys)
        guard let status = object["statusCode"] as? Int else { throw LambdaTestFailure("no integer statusCode in \(raw)") }
        statusCode = status
        guard let headers = object["headers"] as? [String: String] else { throw LambdaTestFailure("headers are not a string map in \(raw)") }
        self.headers = headers
        multiValueHeaders = object["multiValueHeaders"] as? [String: [String]]
        cookies = object["cookies"] as? [String]
        body = object["body"] as? String ?? ""
        isBase64Encoded = object["isBase64Encoded"] as? Bool ?? false
    }

    /// A header's value, its name matched without regard to case.
    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    /// A multi-value header's values, the name matched without regard to case.
    func multiValueHeader(_ name: String) -> [String]? {
        multiValueHeaders?.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    /// The body's bytes, base64-decoded when `isBase64Encoded`.
    var bodyData: Data {
        get throws {
            guard isBase64Encoded else { return Data(body.utf8) }
            guard let data = Data(base64Encoded: body) else { throw LambdaTestFailure("the body is not base64: \(body)") }
            return data
        }
    }

    /// The body as discfg's JSON envelope.
    func envelope() throws -> Envelope {
        do {
            return try JSONDecoder.discfg().decode(Envelope.self, from: bodyData)
        } catch {
            throw LambdaTestFailure("the body is not a discfg envelope (\(error)): \(raw)")
        }
    }
}
