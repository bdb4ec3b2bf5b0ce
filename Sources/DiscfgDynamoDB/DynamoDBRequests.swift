import Foundation

/// A condition or update expression with its placeholders.
struct Expression: Sendable {
    var text: String
    var names: [String: String]
    var values: Attributes

    init(_ text: ExpressionText, values: Attributes = [:]) {
        self.text = text.text
        names = text.names
        self.values = values
    }

    /// The item exists (any item has a partition key).
    static let itemExists = Expression("attribute_exists(\(.pk))")
    /// No item has this key yet.
    static let itemAbsent = Expression("attribute_not_exists(\(.pk))")
    /// The key has no value: no item, or only the placeholder a ``BulkChange`` stages for a
    /// new key. A committing writer holds the meta item, so a placeholder it meets is the
    /// leftover of a change that ended, and is written over.
    static let keyAbsent = Expression("attribute_not_exists(\(.modRevision))")
}

/// One action of a `TransactWriteItems` call.
enum WriteAction: Sendable, Encodable {
    /// Writes a whole item, if `condition` holds.
    case put(Attributes, condition: Expression?)
    /// Deletes an item, if `condition` holds.
    case delete(key: Attributes, condition: Expression?)
    /// Fails the transaction unless `condition` holds for the item.
    case check(key: Attributes, condition: Expression)
    /// Changes some attributes of an item (`update`, an update expression whose names and
    /// values are merged with the condition's), if `condition` holds.
    case update(key: Attributes, update: Expression, condition: Expression?)

    /// The encoder's `userInfo` key holding the table name.
    static let tableNameKey = CodingUserInfoKey(rawValue: "tableName")!

    private enum CodingKeys: String, CodingKey { case Put, Delete, ConditionCheck, Update }
    private enum BodyKeys: String, CodingKey {
        case TableName, Item, Key, ConditionExpression, UpdateExpression, ExpressionAttributeNames, ExpressionAttributeValues
    }

    func encode(to encoder: any Encoder) throws {
        let table = encoder.userInfo[Self.tableNameKey] as? String ?? ""
        var container = encoder.container(keyedBy: CodingKeys.self)
        let (kind, itemKey, attributes, condition): (CodingKeys, BodyKeys, Attributes, Expression?) = switch self {
        case .put(let item, let condition): (.Put, .Item, item, condition)
        case .delete(let key, let condition): (.Delete, .Key, key, condition)
        case .check(let key, let condition): (.ConditionCheck, .Key, key, condition)
        case .update(let key, _, let condition): (.Update, .Key, key, condition)
        }
        var body = container.nestedContainer(keyedBy: BodyKeys.self, forKey: kind)
        try body.encode(table, forKey: .TableName)
        try body.encode(attributes, forKey: itemKey)
        var names = condition?.names ?? [:]
        var values = condition?.values ?? [:]
        if case .update(_, let update, _) = self {
            try body.encode(update.text, forKey: .UpdateExpression)
            names.merge(update.names) { $1 }
            values.merge(update.values) { $1 }
        }
        if let condition { try body.encode(condition.text, forKey: .ConditionExpression) }
        if !names.isEmpty { try body.encode(names, forKey: .ExpressionAttributeNames) }
        if !values.isEmpty { try body.encode(values, forKey: .ExpressionAttributeValues) }
    }

    /// The bytes this action sends, for DynamoDB's 4 MB transaction limit.
    var itemSize: Int {
        switch self {
        case .put(let item, _): item.estimatedSize
        case .delete(let key, _), .check(let key, _): key.estimatedSize
        case .update(let key, let update, _): key.estimatedSize + update.values.estimatedSize
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

extension Expression {
    /// Every item of partition `pk`.
    static func partition(_ pk: String) -> Expression {
        Expression("\(.pk) = :pk", values: [":pk": .s(pk)])
    }

    /// The items of partition `pk` whose `sortKey` is in `low...high`.
    static func partition(_ pk: String, _ sortKey: Attribute, from low: String, through high: String) -> Expression {
        Expression("\(.pk) = :pk AND \(sortKey) BETWEEN :low AND :high", values: [":pk": .s(pk), ":low": .s(low), ":high": .s(high)])
    }
}

extension QueryInput {
    /// A query of the items `key` selects, in the table or one of its indexes.
    init(table: String, index: DynamoDBIndex? = nil, key: Expression, consistent: Bool, limit: Int? = nil, newestFirst: Bool? = nil) {
        self.init(
            TableName: table, IndexName: index?.rawValue, KeyConditionExpression: key.text,
            ExpressionAttributeNames: key.names.isEmpty ? nil : key.names,
            ExpressionAttributeValues: key.values.isEmpty ? nil : key.values,
            Limit: limit, ScanIndexForward: newestFirst.map { !$0 }, ConsistentRead: consistent
        )
    }

    /// Asks only for `attributes` of each item.
    mutating func project(_ attributes: [Attribute]) {
        let projection = ExpressionText(projecting: attributes)
        ProjectionExpression = projection.text
        ExpressionAttributeNames = ExpressionAttributeNames.adding(projection.names)
    }

    /// Replaces the key condition; `key` names the same attributes as the one it replaces.
    mutating func setKey(_ key: Expression) {
        KeyConditionExpression = key.text
        ExpressionAttributeNames = ExpressionAttributeNames.adding(key.names)
        ExpressionAttributeValues = (ExpressionAttributeValues ?? [:]).merging(key.values) { $1 }
    }
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
    /// `ALL_NEW` to have the item as the update left it in ``UpdateItemOutput``.
    var ReturnValues: String?
}

/// What `UpdateItem` answers: the item, when the input asked for it.
struct UpdateItemOutput: Decodable {
    var Attributes: [String: AttributeValue]?
}

extension PutItemInput {
    init(table: String, item: Attributes, condition: Expression) {
        self.init(
            TableName: table, Item: item, ConditionExpression: condition.text,
            ExpressionAttributeNames: condition.names.isEmpty ? nil : condition.names,
            ExpressionAttributeValues: condition.values.isEmpty ? nil : condition.values
        )
    }
}

extension DeleteItemInput {
    init(table: String, key: Attributes, condition: Expression? = nil) {
        self.init(
            TableName: table, Key: key, ConditionExpression: condition?.text,
            ExpressionAttributeNames: condition.flatMap { $0.names.isEmpty ? nil : $0.names },
            ExpressionAttributeValues: condition.flatMap { $0.values.isEmpty ? nil : $0.values }
        )
    }
}

extension UpdateItemInput {
    /// Applies `update` to the item at `key` if `condition` holds.
    init(table: String, key: Attributes, update: Expression, condition: Expression? = nil) {
        let names = update.names.merging(condition?.names ?? [:]) { $1 }
        let values = update.values.merging(condition?.values ?? [:]) { $1 }
        self.init(
            TableName: table, Key: key, UpdateExpression: update.text, ConditionExpression: condition?.text,
            ExpressionAttributeNames: names.isEmpty ? nil : names, ExpressionAttributeValues: values.isEmpty ? nil : values
        )
    }
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
