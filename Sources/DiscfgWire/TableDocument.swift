import DiscfgCore

/// A DynamoDB table's status as shown by `discfg init`, `info` and `update`.
public struct TableDocument: Codable, Hashable, Sendable {
    /// The table name.
    public var name: String
    /// `CREATING`, `ACTIVE`, `UPDATING` …
    public var status: String
    /// `PAY_PER_REQUEST` or `PROVISIONED`.
    public var billingMode: String
    /// Provisioned read capacity units, when provisioned.
    public var readCapacity: Int?
    /// Provisioned write capacity units, when provisioned.
    public var writeCapacity: Int?
    /// DynamoDB's approximate item count.
    public var itemCount: Int
    /// The stream's view type, when the stream is on.
    public var stream: String?
    /// The TTL status of the `ttl` attribute.
    public var timeToLive: String

    /// Creates a document.
    public init(name: String, status: String, billingMode: String, readCapacity: Int?, writeCapacity: Int?, itemCount: Int, stream: String?, timeToLive: String) {
        self.name = name
        self.status = status
        self.billingMode = billingMode
        self.readCapacity = readCapacity
        self.writeCapacity = writeCapacity
        self.itemCount = itemCount
        self.stream = stream
        self.timeToLive = timeToLive
    }
}
