import Foundation

/// A condition or update expression with its placeholders.
struct Expression: Sendable {
    var text: String
    var names: [String: String] = [:]
    var values: Attributes = [:]
}

/// One action of a `TransactWriteItems` call.
enum WriteAction: Sendable, Encodable {
    /// Writes a whole item, if `condition` holds.
    case put(Attributes, condition: Expression?)
    /// Deletes an item, if `condition` holds.
    case delete(key: Attributes, condition: Expression?)
    /// Fails the transaction unless `condition` holds for the item.
    case check(key: Attributes, condition: Expression)

    /// The encoder's `userInfo` key holding the table name.
    static let tableNameKey = CodingUserInfoKey(rawValue: "tableName")!

    private enum CodingKeys: String, CodingKey { case Put, Delete, ConditionCheck }
    private enum BodyKeys: String, CodingKey {
        case TableName, Item, Key, ConditionExpression, ExpressionAttributeNames, ExpressionAttributeValues
    }

    func encode(to encoder: any Encoder) throws {
        let table = encoder.userInfo[Self.tableNameKey] as? String ?? ""
        var container = encoder.container(keyedBy: CodingKeys.self)
        let (kind, itemKey, attributes, condition): (CodingKeys, BodyKeys, Attributes, Expression?) = switch self {
        case .put(let item, let condition): (.Put, .Item, item, condition)
        case .delete(let key, let condition): (.Delete, .Key, key, condition)
        case .check(let key, let condition): (.ConditionCheck, .Key, key, condition)
        }
        var body = container.nestedContainer(keyedBy: BodyKeys.self, forKey: kind)
        try body.encode(table, forKey: .TableName)
        try body.encode(attributes, forKey: itemKey)
        if let condition {
            try body.encode(condition.text, forKey: .ConditionExpression)
            if !condition.names.isEmpty { try body.encode(condition.names, forKey: .ExpressionAttributeNames) }
            if !condition.values.isEmpty { try body.encode(condition.values, forKey: .ExpressionAttributeValues) }
        }
    }

    /// The bytes this action sends, for DynamoDB's 4 MB transaction limit.
    var itemSize: Int {
        switch self {
        case .put(let item, _): item.estimatedSize
        case .delete(let key, _), .check(let key, _): key.estimatedSize
        }
    }
}

struct GetItemInput: Encodable {
    var TableName: String
    var Key: Attributes
    var ConsistentRead: Bool
    var ProjectionExpression: String?
    var ExpressionAttributeNames: [String: String]?
    var ReturnConsumedCapacity = "TOTAL"
}

struct GetItemOutput: Decodable {
    var Item: Attributes?
}

struct KeysAndAttributes: Codable {
    var Keys: [Attributes]
    var ConsistentRead: Bool?
    var ProjectionExpression: String?
    var ExpressionAttributeNames: [String: String]?
}

struct BatchGetItemInput: Encodable {
    var RequestItems: [String: KeysAndAttributes]
    var ReturnConsumedCapacity = "TOTAL"
}

struct BatchGetItemOutput: Decodable {
    var Responses: [String: [Attributes]]?
    var UnprocessedKeys: [String: KeysAndAttributes]?
}

/// A `Query` request; `page` fields are set by the paginating caller.
struct QueryInput: Encodable {
    var TableName: String
    var IndexName: String?
    var KeyConditionExpression: String
    var ExpressionAttributeNames: [String: String]?
    var ExpressionAttributeValues: Attributes?
    var ExclusiveStartKey: Attributes?
    var Limit: Int?
    var ScanIndexForward: Bool?
    var ConsistentRead: Bool?
    var ProjectionExpression: String?
    var ReturnConsumedCapacity = "TOTAL"
}

struct QueryOutput: Decodable {
    var Items: [Attributes]?
    var LastEvaluatedKey: Attributes?
}

struct TransactWriteItemsInput: Encodable {
    var TransactItems: [WriteAction]
    var ClientRequestToken: String
    var ReturnConsumedCapacity = "TOTAL"
}

struct PutItemInput: Encodable {
    var TableName: String
    var Item: Attributes
    var ConditionExpression: String?
    var ExpressionAttributeNames: [String: String]?
    var ExpressionAttributeValues: Attributes?
    var ReturnConsumedCapacity = "TOTAL"
}

struct DeleteItemInput: Encodable {
    var TableName: String
    var Key: Attributes
    var ConditionExpression: String?
    var ExpressionAttributeNames: [String: String]?
    var ExpressionAttributeValues: Attributes?
    var ReturnConsumedCapacity = "TOTAL"
}

struct UpdateItemInput: Encodable {
    var TableName: String
    var Key: Attributes
    var UpdateExpression: String
    var ConditionExpression: String?
    var ExpressionAttributeNames: [String: String]?
    var ExpressionAttributeValues: Attributes?
    var ReturnConsumedCapacity = "TOTAL"
}

struct WriteRequest: Codable {
    struct DeleteRequest: Codable { var Key: Attributes }
    var DeleteRequest: DeleteRequest
}

struct BatchWriteItemInput: Encodable {
    var RequestItems: [String: [WriteRequest]]
    var ReturnConsumedCapacity = "TOTAL"
}

struct BatchWriteItemOutput: Decodable {
    var UnprocessedItems: [String: [WriteRequest]]?
}

/// An empty response body we do not read.
struct IgnoredOutput: Decodable {}
