import ArgumentParser
import DiscfgAWS
import DiscfgCore
import DiscfgDynamoDB
import DiscfgWire
import Foundation

/// The AWS flags, for `dynamodb://` stores.
///
/// The original discfg spelled them `--credProfile`, `--keyId` and `--secretKey`; those
/// spellings still work, hidden from help, beside the kebab-case names every other flag
/// uses. `-s` is the original's short form of `--secretKey`: it is kept, hidden, but
/// refused by commands with a `--secret` flag (``SecretFlagCommand``), where it would
/// read as that flag.
struct AWSOptions: ParsableArguments {
    @Option(name: [.customShort("l"), .long], help: ArgumentHelp("AWS region of a dynamodb:// store (overrides the URL's). Env: AWS_REGION.", valueName: "region"))
    var region: String?

    @Option(name: [.customShort("p"), .customLong("cred-profile")], help: ArgumentHelp("AWS credentials profile. Env: AWS_PROFILE.", valueName: "profile"))
    var profileOption: String?

    @Option(name: [.customShort("k"), .customLong("key-id")], help: ArgumentHelp("AWS access key ID (with --secret-key).", valueName: "id"))
    var keyIDOption: String?

    @Option(name: .customLong("secret-key"), help: ArgumentHelp("AWS secret access key (with --key-id). Prefer the env AWS_SECRET_ACCESS_KEY or a profile: any user of the machine can read a command line.", valueName: "secret"))
    var secretKeyOption: String?

    @Option(name: .customLong("credProfile"), help: .hidden) var legacyProfile: String?
    @Option(name: .customLong("keyId"), help: .hidden) var legacyKeyID: String?
    @Option(name: .customLong("secretKey"), help: .hidden) var legacySecretKey: String?
    /// `-s`, the original's `--secretKey`.
    @Option(name: .customShort("s"), help: .hidden) var shortSecretKey: String?

    /// `--cred-profile` (or `--credProfile`, `-p`).
    var credProfile: String? { profileOption ?? legacyProfile }
    /// `--key-id` (or `--keyId`, `-k`).
    var keyID: String? { keyIDOption ?? legacyKeyID }
    /// `--secret-key` (or `--secretKey`, `-s`).
    var secretKey: String? { secretKeyOption ?? legacySecretKey ?? shortSecretKey }

    func validate() throws {
        let spellings: [(String, [String?])] = [
            ("--cred-profile", [profileOption, legacyProfile]), ("--key-id", [keyIDOption, legacyKeyID]),
            ("--secret-key", [secretKeyOption, legacySecretKey, shortSecretKey]),
        ]
        for (flag, values) in spellings where values.compactMap({ $0 }).count > 1 {
            throw usage("\(flag) is given more than once (with its old spelling too); give it once", field: flag)
        }
    }

    /// The keys given with --key-id/--secret-key, if any.
    func explicitCredentials() throws -> AWSCredentials? {
        switch (keyID, secretKey) {
        case (nil, nil): nil
        case (let id?, let secret?): AWSCredentials(accessKeyID: id, secretAccessKey: secret)
        default: throw DiscfgError.invalid("keyId", "give both --key-id and --secret-key, or neither")
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
