import Foundation

/// An API Gateway REST API request (payload format 1.0).
struct APIGatewayV1Request: Decodable {
    struct Identity: Decodable {
        var userArn: String?
        var caller: String?
        var accountId: String?
        var user: String?
        var sourceIp: String?
    }

    struct Context: Decodable {
        var requestId: String?
        var stage: String?
        var identity: Identity?
    }

    var httpMethod: String
    var path: String
    var headers: [String: String]?
    var multiValueHeaders: [String: [String]]?
    var queryStringParameters: [String: String]?
    var multiValueQueryStringParameters: [String: [String]]?
    var body: String?
    var isBase64Encoded: Bool?
    var requestContext: Context?
}

/// An HTTP API or Lambda Function URL request (payload format 2.0).
struct APIGatewayV2Request: Decodable {
    struct IAM: Decodable {
        var userArn: String?
        var accountId: String?
        var callerId: String?
    }

    struct Authorizer: Decodable {
        var iam: IAM?
    }

    struct HTTP: Decodable {
        var method: String
        var path: String?
        var sourceIp: String?
    }

    struct Context: Decodable {
        var requestId: String?
        var domainName: String?
        var stage: String?
        var http: HTTP
        var authorizer: Authorizer?
    }

    var version: String
    var rawPath: String
    var rawQueryString: String?
    var cookies: [String]?
    var headers: [String: String]?
    var body: String?
    var isBase64Encoded: Bool?
    var requestContext: Context
}

/// The answer to a payload 1.0 request.
struct APIGatewayV1Response: Encodable {
    var statusCode: Int
    var headers: [String: String]
    var multiValueHeaders: [String: [String]]
    var body: String
    var isBase64Encoded: Bool
}

/// The answer to a payload 2.0 request.
struct APIGatewayV2Response: Encodable {
    var statusCode: Int
    var headers: [String: String]
    var cookies: [String]
    var body: String
    var isBase64Encoded: Bool
}

/// How an event is recognised, before it is decoded in full.
struct EventShape: Decodable {
    struct RequestContext: Decodable {
        struct HTTP: Decodable {
            var method: String?
        }

        var http: HTTP?
    }

    struct Record: Decodable {
        var eventSource: String?
    }

    var version: String?
    var httpMethod: String?
    var rawPath: String?
    var requestContext: RequestContext?
    var Records: [Record]?
    var source: String?
    var detailType: String?

    enum CodingKeys: String, CodingKey {
        case version, httpMethod, rawPath, requestContext, Records, source
        case detailType = "detail-type"
    }

    enum Kind: Equatable {
        case apiGatewayV1, apiGatewayV2, dynamoDBStream, scheduled, unknown
    }

    var kind: Kind {
        if version == "2.0", rawPath != nil, requestContext?.http?.method != nil { return .apiGatewayV2 }
        if httpMethod != nil, version == nil || version == "1.0" { return .apiGatewayV1 }
        if let records = Records, !records.isEmpty, records.allSatisfy({ $0.eventSource == "aws:dynamodb" }) { return .dynamoDBStream }
        if let records = Records, records.isEmpty { return .dynamoDBStream }
        if source == "aws.events", detailType == "Scheduled Event" { return .scheduled }
        return .unknown
    }
}
