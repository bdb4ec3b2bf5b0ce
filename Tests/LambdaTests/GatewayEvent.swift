import Foundation

/// Lambda events as AWS sends them, shaped after the published samples (aws-lambda-go's
/// `events/testdata`: `apigw-request.json`, `apigw-v2-request-iam.json`,
/// `lambda-urls-request.json`) with the method, path, query, headers and body a test needs.
enum GatewayEvent {
    /// A request's parts.
    struct Request {
        var method: String
        /// The path with no query, e.g. `/v1/app/keys/db/host`.
        var path: String
        /// Query parameters in order; a parameter with no value (`?raw`) has `""`.
        var query: [(String, String)] = []
        var headers: [(String, String)] = []
        var body: Data?
        /// Send the body base64-encoded with `isBase64Encoded: true`, as API Gateway does
        /// for binary media types.
        var base64Body = false

        init(_ method: String, _ path: String, query: [(String, String)] = [], headers: [(String, String)] = [], body: Data? = nil, base64Body: Bool = false) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.body = body
            self.base64Body = base64Body
        }

        init(_ method: String, _ path: String, query: [(String, String)] = [], headers: [(String, String)] = [], text: String) {
            self.init(method, path, query: query, headers: headers, body: Data(text.utf8))
        }

        var bodyField: Any {
            guard let body else { return NSNull() }
            return base64Body ? body.base64EncodedString() : String(decoding: body, as: UTF8.self)
        }

        var rawQueryString: String {
            query.map { name, value in
                value.isEmpty ? escape(name) : "\(escape(name))=\(escape(value))"
            }.joined(separator: "&")
        }

        private func escape(_ text: String) -> String {
            var allowed = CharacterSet.urlQueryAllowed
            allowed.remove(charactersIn: "&=+")
            return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
        }
    }

    static let accountID = "123456789012"

    /// An API Gateway REST API proxy event (payload 1.0), deployed at stage `prod`, with the
    /// IAM caller API Gateway authenticated.
    static func restAPI(_ request: Request, callerARN: String? = "arn:aws:iam::123456789012:user/ci", requestID: String = UUID().uuidString.lowercased()) throws -> Data {
        var headers: [String: String] = [:]
        var multiValueHeaders: [String: [String]] = [:]
        let defaults = [
            ("Accept", "*/*"), ("Host", "gy415nuibc.execute-api.us-east-1.amazonaws.com"), ("User-Agent", "discfg-tests/1.0"),
            ("X-Amzn-Trace-Id", "Root=1-5e66d96f-7491f09xmpl79d18acf3d050"), ("X-Forwarded-For", "203.0.113.10"),
            ("X-Forwarded-Port", "443"), ("X-Forwarded-Proto", "https"),
        ]
        for (name, value) in defaults + request.headers {
            headers[name] = value
            multiValueHeaders[name, default: []].append(value)
        }
        var queryParameters: [String: String] = [:]
        var multiValueQuery: [String: [String]] = [:]
        for (name, value) in request.query {
            queryParameters[name] = value
            multiValueQuery[name, default: []].append(value)
        }
        var identity: [String: Any] = [
            "cognitoIdentityPoolId": NSNull(), "cognitoIdentityId": NSNull(), "apiKey": NSNull(), "principalOrgId": NSNull(),
            "cognitoAuthenticationType": NSNull(), "cognitoAuthenticationProvider": NSNull(), "user": NSNull(),
            "accessKey": NSNull(), "accountId": NSNull(), "caller": NSNull(), "userArn": NSNull(),
            "sourceIp": "203.0.113.10", "userAgent": "discfg-tests/1.0",
        ]
        if let callerARN {
            identity["accessKey"] = "ASIAXMPLEACCESSKEY12"
            identity["accountId"] = accountID
            identity["caller"] = "AIDAXMPLECALLERID123"
            identity["user"] = "AIDAXMPLECALLERID123"
            identity["userArn"] = callerARN
        }
        let now = Date()
        let event: [String: Any] = [
            "resource": "/{proxy+}",
            "path": request.path,
            "httpMethod": request.method,
            "headers": headers,
            "multiValueHeaders": multiValueHeaders,
            "queryStringParameters": request.query.isEmpty ? NSNull() : queryParameters,
            "multiValueQueryStringParameters": request.query.isEmpty ? NSNull() : multiValueQuery,
            "pathParameters": ["proxy": String(request.path.dropFirst())],
            "stageVariables": NSNull(),
            "requestContext": [
                "accountId": accountID,
                "apiId": "gy415nuibc",
                "domainName": "gy415nuibc.execute-api.us-east-1.amazonaws.com",
                "domainPrefix": "gy415nuibc",
                "extendedRequestId": "BQGojGkbvHcFXfA=",
                "httpMethod": request.method,
                "identity": identity,
                // The stage is part of the URL a client used, not of `path`.
                "path": "/prod" + request.path,
                "protocol": "HTTP/1.1",
                "requestId": requestID,
                "requestTime": Self.requestTime(now),
                "requestTimeEpoch": Int(now.timeIntervalSince1970 * 1000),
                "resourceId": "roq9wj",
                "resourcePath": "/{proxy+}",
                "stage": "prod",
            ] as [String: Any],
            "body": request.bodyField,
            "isBase64Encoded": request.base64Body,
        ]
        return try JSONSerialization.data(withJSONObject: event)
    }

    /// An HTTP API event (payload 2.0) whose route uses the IAM authorizer; nil `callerARN`
    /// leaves the authorizer out.
    static func httpAPI(
        _ request: Request, callerARN: String? = "arn:aws:iam::123456789012:user/ci", cookies: [String] = [],
        requestID: String = UUID().uuidString.lowercased()
    ) throws -> Data {
        var context = payload2Context(request, domain: "r3pmxmplak.execute-api.us-east-1.amazonaws.com", requestID: requestID)
        context["routeKey"] = "ANY /v1/{proxy+}"
        context["stage"] = "$default"
        if let callerARN {
            context["authorizer"] = [
                "iam": [
                    "accessKey": "ASIAXMPLEACCESSKEY12",
                    "accountId": accountID,
                    "callerId": "AIDAXMPLECALLERID123",
                    "cognitoIdentity": NSNull(),
                    "principalOrgId": "o-xmpl12345",
                    "userArn": callerARN,
                    "userId": "AIDAXMPLECALLERID123",
                ] as [String: Any],
            ]
        }
        var event = payload2Event(request, context: context, cookies: cookies)
        event["routeKey"] = "ANY /v1/{proxy+}"
        event["pathParameters"] = ["proxy": String(request.path.dropFirst("/v1/".count))]
        event["stageVariables"] = NSNull()
        return try JSONSerialization.data(withJSONObject: event)
    }

    /// A Lambda Function URL event (payload 2.0, auth type NONE: no authorizer).
    static func functionURL(_ request: Request, requestID: String = UUID().uuidString.lowercased()) throws -> Data {
        var context = payload2Context(request, domain: "a2xmpl4gcwbwh2fq4pxvlhcbxe0kxhoo.lambda-url.us-east-1.on.aws", requestID: requestID)
        context["routeKey"] = "$default"
        context["stage"] = "$default"
        var event = payload2Event(request, context: context, cookies: [])
        event["routeKey"] = "$default"
        return try JSONSerialization.data(withJSONObject: event)
    }

    private static func payload2Context(_ request: Request, domain: String, requestID: String) -> [String: Any] {
        let now = Date()
        return [
            "accountId": accountID,
            "apiId": String(domain.prefix(while: { $0 != "." })),
            "domainName": domain,
            "domainPrefix": String(domain.prefix(while: { $0 != "." })),
            "http": [
                "method": request.method,
                "path": request.path,
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.10",
                "userAgent": "discfg-tests/1.0",
            ],
            "requestId": requestID,
            "time": Self.requestTime(now),
            "timeEpoch": Int(now.timeIntervalSince1970 * 1000),
        ]
    }

    private static func payload2Event(_ request: Request, context: [String: Any], cookies: [String]) -> [String: Any] {
        // Payload 2.0 lower-cases header names and joins repeated headers with commas.
        var headers: [String: String] = [
            "accept": "*/*", "host": context["domainName"] as? String ?? "", "user-agent": "discfg-tests/1.0",
            "x-amzn-trace-id": "Root=1-5e66d96f-7491f09xmpl79d18acf3d050", "x-forwarded-for": "203.0.113.10",
            "x-forwarded-port": "443", "x-forwarded-proto": "https",
        ]
        for (name, value) in request.headers {
            let name = name.lowercased()
            headers[name] = headers[name].map { "\($0),\(value)" } ?? value
        }
        var event: [String: Any] = [
            "version": "2.0",
            "rawPath": request.path,
            "rawQueryString": request.rawQueryString,
            "headers": headers,
            "requestContext": context,
            "isBase64Encoded": request.base64Body,
        ]
        if !cookies.isEmpty { event["cookies"] = cookies }
        if !request.query.isEmpty {
            var parameters: [String: String] = [:]
            for (name, value) in request.query { parameters[name] = parameters[name].map { "\($0),\(value)" } ?? value }
            event["queryStringParameters"] = parameters
        }
        if request.body != nil { event["body"] = request.bodyField }
        return event
    }

    /// An EventBridge schedule's event.
    static func scheduled() throws -> Data {
        let event: [String: Any] = [
            "version": "0",
            "id": UUID().uuidString.lowercased(),
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": accountID,
            "time": ISO8601DateFormatter().string(from: Date()),
            "region": "us-east-1",
            "resources": ["arn:aws:events:us-east-1:\(accountID):rule/discfg-expiry-sweep"],
            "detail": [String: Any](),
        ]
        return try JSONSerialization.data(withJSONObject: event)
    }

    /// `15/May/2020:06:01:09 +0000`, API Gateway's request time.
    private static func requestTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "dd/MMM/yyyy:HH:mm:ss Z"
        return formatter.string(from: date)
    }
}
