@testable import DiscfgAWS
import DiscfgCore
import DiscfgDynamoDB
import Foundation
import Testing

@Suite("AWS errors as one line")
struct DynamoDBErrorsTests {
    let context = DynamoDBErrors.Context(table: "discfg", region: "eu-west-1", endpoint: nil)

    @Test func missingCredentialsListTheSourcesTried() throws {
        let chain = CredentialChainError(attempts: [
            .init(source: "environment", reason: "AWS_ACCESS_KEY_ID is not set"),
            .init(source: "shared credentials file", reason: "no profile default"),
        ])
        let error = try #require(DynamoDBErrors.map(chain, operation: "GetItem", context) as? DiscfgError)
        #expect(error.code == .unauthenticated)
        #expect(error.message.contains("environment (AWS_ACCESS_KEY_ID is not set); shared credentials file (no profile default)"))
        #expect(!error.message.contains("\n"))
    }

    @Test func throttlingSaysHowOftenItWasRetried() throws {
        let aws = AWSError(code: .throttling, awsCode: "ProvisionedThroughputExceededException", message: "slow down", httpStatus: 400, retries: 7)
        let error = try #require(DynamoDBErrors.map(aws, operation: "Query", context) as? DiscfgError)
        #expect(error.code == .throttled)
        #expect(error.message.contains("DynamoDB Query on table \"discfg\" in eu-west-1 failed"))
        #expect(error.message.contains("ProvisionedThroughputExceededException"))
        #expect(error.message.contains("after 7 retries"))
        #expect(error.message.contains("hint:"))
    }

    @Test("an endpoint that refused or does not resolve is one sentence naming it: no operation, table or AWS words")
    func unconnectedEndpointIsNamed() throws {
        let endpoint = try #require(URL(string: "https://dynamodb.eu-west-1.amazonaws.com"))
        for (kind, sentence) in [
            (ConnectFailure.Kind.refused, "the DynamoDB endpoint https://dynamodb.eu-west-1.amazonaws.com refused the connection"),
            (.unresolved, "the DynamoDB endpoint https://dynamodb.eu-west-1.amazonaws.com was not found: its host name does not resolve"),
        ] {
            let aws = AWSError(code: .network, awsCode: "NetworkError", message: "connection refused", httpStatus: nil, retries: 2,
                               connectFailure: ConnectFailure(kind, endpoint: endpoint))
            let error = try #require(DynamoDBErrors.map(aws, operation: "GetItem", context) as? DiscfgError)
            #expect(error.code == .unavailable && error.field == "store")
            #expect(error.message == sentence)
        }
        // A connection lost mid-request keeps the whole line: the table was reached.
        let lost = AWSError(code: .network, awsCode: "NetworkError", message: "connection reset", httpStatus: nil, retries: 7)
        let error = try #require(DynamoDBErrors.map(lost, operation: "GetItem", context) as? DiscfgError)
        #expect(error.code == .unavailable && error.message.contains("DynamoDB GetItem on table \"discfg\""))
    }

    @Test func accessDeniedIsPermissionDenied() throws {
        let aws = AWSError(code: .authentication, awsCode: "AccessDeniedException", message: "no", httpStatus: 400)
        #expect((DynamoDBErrors.map(aws, operation: "GetItem", context) as? DiscfgError)?.code == .permissionDenied)
        let unknown = AWSError(code: .authentication, awsCode: "UnrecognizedClientException", message: "bad key", httpStatus: 400)
        #expect((DynamoDBErrors.map(unknown, operation: "GetItem", context) as? DiscfgError)?.code == .unauthenticated)
    }

    @Test func aMissingTableNamesTheFix() throws {
        let aws = AWSError(code: .resourceNotFound, awsCode: "ResourceNotFoundException", message: "Requested resource not found", httpStatus: 400)
        let error = try #require(DynamoDBErrors.map(aws, operation: "GetItem", context) as? DiscfgError)
        #expect(error.code == .unavailable)
        #expect(error.message.contains("discfg init"))
    }
}
