import ArgumentParser
import DiscfgAWS
import DiscfgCore
import DiscfgDynamoDB
import DiscfgWire
import Foundation

/// The original discfg's AWS flags, for `dynamodb://` stores.
struct AWSOptions: ParsableArguments {
    @Option(name: [.customShort("l"), .long], help: ArgumentHelp("AWS region of a dynamodb:// store (overrides the URL's). Env: AWS_REGION.", valueName: "region"))
    var region: String?

    @Option(name: [.customShort("p"), .customLong("credProfile")], help: ArgumentHelp("AWS credentials profile. Env: AWS_PROFILE.", valueName: "profile"))
    var credProfile: String?

    @Option(name: [.customShort("k"), .customLong("keyId")], help: ArgumentHelp("AWS access key ID (with --secretKey).", valueName: "id"))
    var keyID: String?

    @Option(name: [.customShort("s"), .customLong("secretKey")], help: ArgumentHelp("AWS secret access key (with --keyId). Prefer the env AWS_SECRET_ACCESS_KEY or a profile: any user of the machine can read a command line.", valueName: "secret"))
    var secretKey: String?

    /// The keys given with --keyId/--secretKey, if any.
    func explicitCredentials() throws -> AWSCredentials? {
        switch (keyID, secretKey) {
        case (nil, nil): nil
        case (let id?, let secret?): AWSCredentials(accessKeyID: id, secretAccessKey: secret)
        default: throw DiscfgError.invalid("keyId", "give both --keyId and --secretKey, or neither")
        }
    }
}

/// `--read-capacity` / `--write-capacity`.
struct CapacityOptions: ParsableArguments {
    @Option(name: .customLong("read-capacity"), help: ArgumentHelp("DynamoDB table: provisioned read capacity units (with --write-capacity). Default: on-demand.", valueName: "units"),
            transform: { Int(try Self.capacityUnits.named("--read-capacity").parse($0)) })
    var readCapacity: Int?

    @Option(name: .customLong("write-capacity"), help: ArgumentHelp("DynamoDB table: provisioned write capacity units (with --read-capacity).", valueName: "units"),
            transform: { Int(try Self.capacityUnits.named("--write-capacity").parse($0)) })
    var writeCapacity: Int?

    /// Provisioned capacity units DynamoDB accepts (its per-table quota can be raised).
    static let capacityUnits = NumberField("capacity", 1...1_000_000)

    /// The capacity the flags ask for, or nil.
    func capacity() throws -> TableCapacity? {
        try TableCapacity(read: readCapacity, write: writeCapacity)
    }
}

extension TableDocument {
    /// The document for a table status.
    init(_ status: TableStatus) {
        var read: Int?
        var write: Int?
        if case .provisioned(let r, let w) = status.capacity {
            read = r
            write = w
        }
        self.init(
            name: status.name, status: status.status, billingMode: read == nil ? "PAY_PER_REQUEST" : "PROVISIONED",
            readCapacity: read, writeCapacity: write, itemCount: status.itemCount, stream: status.streamViewType, timeToLive: status.timeToLive
        )
    }

    /// Rows for human output.
    var rows: [[String]] {
        [
            ["table", name],
            ["status", status],
            ["capacity", readCapacity.map { "provisioned: \($0) RCU, \(writeCapacity ?? 0) WCU" } ?? "on-demand"],
            ["items", "\(itemCount) (approximate)"],
            ["stream", stream ?? "off"],
            ["ttl", timeToLive],
        ]
    }
}
