import DiscfgAWS
import DiscfgCore
import Foundation

/// The DynamoDB calls the store makes on its one table, each with the table name filled
/// in, pagination and unprocessed items handled, and failures turned into one-line
/// ``DiscfgError``s (see ``DynamoDBErrors``).
struct DynamoDBConnection: Sendable {
    let client: AWSJSONClient
    let table: String
    let estimate: CapacityEstimate

    private var context: DynamoDBErrors.Context {
        DynamoDBErrors.Context(table: table, region: client.configuration.region, endpoint: client.configuration.endpoint)
    }

    /// Calls `operation`, mapping every failure to a ``DiscfgError``.
    func call<Input: Encodable, Output: Decodable>(_ operation: String, _ input: Input, as output: Output.Type = Output.self) async throws -> Output {
        do {
            return try await raw(operation, input, as: output)
        } catch {
            throw DynamoDBErrors.map(error, operation: operation, context)
        }
    }

    /// Calls `operation` and lets ``AWSError`` through unchanged, for callers that react to
    /// particular failures (a cancelled transaction, a missing table).
    func raw<Input: Encodable, Output: Decodable>(_ operation: String, _ input: Input, as output: Output.Type = Output.self) async throws -> Output {
        let encoder = JSONEncoder()
        encoder.userInfo[WriteAction.tableNameKey] = table
        let body = try encoder.encode(input)
        // The request's deadline bounds the call, its retries and their waits.
        let data = try await client.send(operation: operation, body: body, deadline: Deadline.current?.instant)
        return try JSONDecoder().decode(Output.self, from: data.isEmpty ? Data("{}".utf8) : data)
    }

    /// Maps a failure of `operation` the way ``call(_:_:as:)`` does.
    func mapped(_ error: any Error, operation: String) -> any Error {
        DynamoDBErrors.map(error, operation: operation, context)
    }

    // MARK: - Reads

    /// One item, or nil.
    func getItem(_ key: Attributes, consistent: Bool, projection: [Attribute]? = nil) async throws -> Attributes? {
        let projected = projection.map(ExpressionText.init(projecting:))
        let input = GetItemInput(
            TableName: table, Key: key, ConsistentRead: consistent,
            ProjectionExpression: projected?.text, ExpressionAttributeNames: projected?.names
        )
        let item = try await call("GetItem", input, as: GetItemOutput.self).Item
        estimate.record("GetItem", read: CapacityEstimate.readUnits(bytes: item?.estimatedSize ?? 0, consistent: consistent))
        return item
    }

    /// The items with these keys that exist, in no particular order; 100 keys a call,
    /// unprocessed keys asked for again.
    func batchGet(_ keys: [Attributes], consistent: Bool) async throws -> [Attributes] {
        var found: [Attributes] = []
        var start = 0
        while start < keys.count {
            var pending: KeysAndAttributes? = KeysAndAttributes(Keys: Array(keys[start..<min(start + 100, keys.count)]), ConsistentRead: consistent)
            start += 100
            var attempt = 0
            while let request = pending {
                let output = try await call("BatchGetItem", BatchGetItemInput(RequestItems: [table: request]), as: BatchGetItemOutput.self)
                let items = output.Responses?[table] ?? []
                found += items
                let misses = max(0, request.Keys.count - items.count - (output.UnprocessedKeys?[table]?.Keys.count ?? 0))
                let units = items.reduce(0) { $0 + CapacityEstimate.readUnits(bytes: $1.estimatedSize, consistent: consistent) }
                    + Double(misses) * CapacityEstimate.readUnits(bytes: 0, consistent: consistent)
                estimate.record("BatchGetItem", read: units)
                pending = output.UnprocessedKeys?[table].flatMap { $0.Keys.isEmpty ? nil : $0 }
                if pending != nil {
                    attempt += 1
                    try await backoff(attempt)
                }
            }
        }
        return found
    }

    /// One page of a query.
    func queryPage(_ input: QueryInput) async throws -> QueryOutput {
        var input = input
        input.TableName = table
        let output = try await call("Query", input, as: QueryOutput.self)
        let bytes = (output.Items ?? []).reduce(0) { $0 + $1.estimatedSize }
        estimate.record("Query", read: CapacityEstimate.readUnits(bytes: bytes, consistent: input.ConsistentRead == true))
        return output
    }

    /// Every item a query matches, following `LastEvaluatedKey`.
    func queryAll(_ input: QueryInput) async throws -> [Attributes] {
        var input = input
        var items: [Attributes] = []
        while true {
            let page = try await queryPage(input)
            items += page.Items ?? []
            guard let next = page.LastEvaluatedKey else { return items }
            input.ExclusiveStartKey = next
        }
    }

    // MARK: - Writes

    /// Deletes items by key, 25 a call, unprocessed items sent again.
    func batchDelete(_ keys: [Attributes]) async throws {
        var start = 0
        while start < keys.count {
            var pending = keys[start..<min(start + 25, keys.count)].map { WriteRequest(DeleteRequest: .init(Key: $0)) }
            start += 25
            var attempt = 0
            while !pending.isEmpty {
                let output = try await call("BatchWriteItem", BatchWriteItemInput(RequestItems: [table: pending]), as: BatchWriteItemOutput.self)
                estimate.record("BatchWriteItem", write: Double(pending.count - (output.UnprocessedItems?[table]?.count ?? 0)))
                pending = output.UnprocessedItems?[table] ?? []
                if !pending.isEmpty {
                    attempt += 1
                    try await backoff(attempt)
                }
            }
        }
    }

    /// Full-jitter backoff for unprocessed batch items, as for throttling.
    private func backoff(_ attempt: Int) async throws {
        let policy = client.configuration.retryPolicy
        guard attempt < max(policy.maxAttempts, 2) * 4 else {
            throw DiscfgError(.throttled, "DynamoDB kept returning unprocessed items for table \"\(table)\" after \(attempt) tries; raise the table's capacity or use on-demand billing")
        }
        let delay = policy.delay(forRetry: attempt - 1)
        if let deadline = Deadline.current, ContinuousClock.now + delay >= deadline.instant { throw Deadline.exceeded() }
        try await policy.sleep(delay)
    }
}
