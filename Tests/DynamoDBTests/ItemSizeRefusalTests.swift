import DiscfgAWS
import DiscfgCore
@testable import DiscfgDynamoDB
import DiscfgTestSupport
import Foundation
import Testing

/// DynamoDB's refusal of an item for its size is the caller's to hear (`tooLarge`, shown
/// as it is by the failure policy), so it is told in the caller's terms: the key and
/// the limits, never the table, the endpoint or AWS's words.
@Suite("DynamoDB: an item too large is refused in the caller's terms")
struct ItemSizeRefusalTests {
    static func expectCallersTerms(_ error: DiscfgError, table: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error.code == .tooLarge, sourceLocation: sourceLocation)
        #expect(error.message.contains("400 KB"), "names the limit: \(error.message)", sourceLocation: sourceLocation)
        for word in [table, "ValidationException", "Item size", "DynamoDB PutItem", "us-east-1", "127.0.0.1", "eu-west-1", "failed:"] {
            #expect(!error.message.contains(word), "\"\(word)\" shown: \(error.message)", sourceLocation: sourceLocation)
        }
    }

    @Test("moto's refusal of a 410 KB item")
    func motoRefusal() async throws {
        let store = try await makeStore()
        var item = DynamoDBLayout.key("size-test", "item")
        item[Attribute.value.rawValue] = .b(Data(count: 410_000))
        let error = await #expect(throws: DiscfgError.self) {
            _ = try await store.connection.call("PutItem", PutItemInput(TableName: store.configuration.table, Item: item), as: IgnoredOutput.self)
        }
        let refusal = try #require(error)
        Self.expectCallersTerms(refusal, table: store.configuration.table)
        #expect(refusal.field == "change")
    }

    @Test("the refusal of one key's item names the key")
    func namesTheKey() throws {
        let aws = AWSError(code: .validation, awsCode: "ValidationException", message: "Item size has exceeded the maximum allowed size", httpStatus: 400)
        let context = DynamoDBErrors.Context(table: "discfg-prod", region: "eu-west-1", endpoint: nil)
        let mapped: DiscfgError = DynamoDBErrors.map(aws, operation: "TransactWriteItems", context)
        Self.expectCallersTerms(mapped, table: "discfg-prod")
        let named = DynamoDBErrors.itemTooLarge(try Key("db/host"))
        Self.expectCallersTerms(named, table: "discfg-prod")
        #expect(named.message.contains("\"/db/host\"") && named.field == "key", "\(named.message)")
    }
}
