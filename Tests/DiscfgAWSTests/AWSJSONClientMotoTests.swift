import DiscfgAWS
import DiscfgTestSupport
import Foundation
import Testing

/// The JSON client against moto's DynamoDB implementation: real request/response/error shapes.
///
/// moto does not verify signatures (any key and signature is accepted), so these tests prove
/// the protocol handling; the botocore comparison proves the signatures.
@Suite("AWS JSON client against moto_server")
struct AWSJSONClientMotoTests {
    static let credentials = StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "discfg-test"))

    func withClient<T>(_ moto: MotoServer, _ body: (AWSJSONClient) async throws -> T) async throws -> T {
        let client = AWSJSONClient(
            configuration: .dynamoDB(region: "us-east-1", endpoint: moto.endpoint, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))),
            credentialProvider: Self.credentials
        )
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try await client.shutdown()
            throw error
        }
    }

    func json(_ text: String) -> Data { Data(text.utf8) }

    func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func createTable(_ client: AWSJSONClient, _ name: String) async throws {
        _ = try await client.send(operation: "CreateTable", body: json("""
            {"TableName": "\(name)", "BillingMode": "PAY_PER_REQUEST",
             "KeySchema": [{"AttributeName": "key", "KeyType": "HASH"}],
             "AttributeDefinitions": [{"AttributeName": "key", "AttributeType": "S"}]}
            """))
    }

    struct ListTablesInput: Encodable { let Limit: Int }
    struct ListTablesOutput: Decodable { let TableNames: [String] }

    @Test func tableAndItemRoundTripWithConsumedCapacity() async throws {
        try await withMotoServer { moto in
            try await withClient(moto) { client in
                try await createTable(client, "discfg-config")
                let tables = try await client.send(operation: "ListTables", input: ListTablesInput(Limit: 10), as: ListTablesOutput.self)
                #expect(tables.TableNames.contains("discfg-config"))

                _ = try await client.send(operation: "PutItem", body: json("""
                    {"TableName": "discfg-config", "ReturnConsumedCapacity": "TOTAL",
                     "Item": {"key": {"S": "/app/feature"}, "value": {"S": "on"}, "version": {"N": "1"}}}
                    """))
                let got = try object(try await client.send(operation: "GetItem", body: json("""
                    {"TableName": "discfg-config", "ReturnConsumedCapacity": "TOTAL", "ConsistentRead": true,
                     "Key": {"key": {"S": "/app/feature"}}}
                    """)))
                let item = try #require(got["Item"] as? [String: [String: String]])
                #expect(item["value"] == ["S": "on"])
                #expect(item["version"] == ["N": "1"])

                let put = await client.metrics.metrics(for: "PutItem")
                let get = await client.metrics.metrics(for: "GetItem")
                #expect(put.calls == 1 && put.roundTrips == 1 && put.retries == 0)
                #expect(get.calls == 1 && get.roundTrips == 1)
                #expect(put.capacityUnits > 0)
                #expect(get.capacityUnits > 0)
                #expect(await client.metrics.report().contains("GetItem"))
                await client.metrics.reset()
                #expect(await client.metrics.snapshot().isEmpty)
            }
        }
    }

    @Test func conditionalPutFailureIsTyped() async throws {
        try await withMotoServer { moto in
            try await withClient(moto) { client in
                try await createTable(client, "discfg-cond")
                let put = json("""
                    {"TableName": "discfg-cond", "Item": {"key": {"S": "k"}},
                     "ConditionExpression": "attribute_not_exists(#k)", "ExpressionAttributeNames": {"#k": "key"}}
                    """)
                _ = try await client.send(operation: "PutItem", body: put)
                let error = await #expect(throws: AWSError.self) { try await client.send(operation: "PutItem", body: put) }
                #expect(error?.code == .conditionalCheckFailed)
                #expect(error?.awsCode == "ConditionalCheckFailedException")
                #expect(error?.httpStatus == 400)
                #expect(error?.retries == 0)
                #expect(error?.description.contains("hint:") == true)
                #expect(await client.metrics.metrics(for: "PutItem").failures == 1)
            }
        }
    }

    @Test func transactionCancellationReasonsAreDecoded() async throws {
        try await withMotoServer { moto in
            try await withClient(moto) { client in
                try await createTable(client, "discfg-tx")
                _ = try await client.send(operation: "PutItem", body: json(#"{"TableName": "discfg-tx", "Item": {"key": {"S": "taken"}}}"#))
                let error = await #expect(throws: AWSError.self) {
                    try await client.send(operation: "TransactWriteItems", body: json("""
                        {"TransactItems": [
                          {"Put": {"TableName": "discfg-tx", "Item": {"key": {"S": "fresh"}}}},
                          {"ConditionCheck": {"TableName": "discfg-tx", "Key": {"key": {"S": "taken"}},
                                              "ConditionExpression": "attribute_not_exists(#k)",
                                              "ExpressionAttributeNames": {"#k": "key"}}}
                        ]}
                        """))
                }
                #expect(error?.code == .transactionCanceled)
                #expect(error?.cancellationReasons.map(\.code) == ["None", "ConditionalCheckFailed"])
                #expect(error?.cancellationReasons.last?.message?.isEmpty == false)
                #expect(error?.description.contains("ConditionalCheckFailed") == true)
            }
        }
    }

    @Test func missingTableIsResourceNotFound() async throws {
        try await withMotoServer { moto in
            try await withClient(moto) { client in
                let error = await #expect(throws: AWSError.self) {
                    try await client.send(operation: "GetItem", body: json(#"{"TableName": "discfg-missing", "Key": {"key": {"S": "k"}}}"#))
                }
                #expect(error?.code == .resourceNotFound)
                #expect(error?.awsCode == "ResourceNotFoundException")
                #expect(error?.retries == 0)
                #expect(error?.requestID?.isEmpty == false)
            }
        }
    }
}
