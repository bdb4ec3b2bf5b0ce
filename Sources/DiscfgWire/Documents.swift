import DiscfgCore
import Foundation

/// The JSON form of an ``Item``: what the CLI's `-f json` and the REST API print.
///
/// A value that is valid UTF-8 is a JSON string; any other value is base64 with
/// `"encoding": "base64"`.
public struct ItemDocument: Codable, Hashable, Sendable {
    public var key: String
    public var value: String
    public var encoding: String?
    public var contentType: String?
    public var version: UInt64
    public var createRevision: Revision
    public var modRevision: Revision
    public var modified: Date
    public var expiresAt: Date?

    /// The document for an item.
    public init(_ item: Item) {
        key = item.key.path
        (value, encoding) = ValueEncoding.encode(item.value)
        contentType = item.contentType
        version = item.version
        createRevision = item.createRevision
        modRevision = item.modRevision
        modified = item.modifiedAt
        expiresAt = item.expiresAt
    }

    /// The item this document describes.
    public func item() throws -> Item {
        Item(
            key: try Key(key), value: try ValueEncoding.decode(value, encoding: encoding), contentType: contentType,
            version: version, createRevision: createRevision, modRevision: modRevision, modifiedAt: modified, expiresAt: expiresAt
        )
    }
}

/// The JSON form of an ``AccessToken``'s record: never the token or its hash.
public struct TokenDocument: Codable, Hashable, Sendable {
    public var id: String
    public var role: Role
    /// The configs it reaches at all; absent for all. A config here may be reached only
    /// under some prefixes: ``scopes`` says where.
    public var configs: [String]?
    /// Where it reaches (``AccessScope`` text: `demo`, `demo:/app/`,
    /// `demo:etcd:/registry/`); absent for everything.
    public var scopes: [String]?
    public var description: String?
    public var createdAt: Date

    /// The document for a token record.
    public init(_ token: AccessToken) {
        id = token.id
        role = token.role
        configs = token.configs?.map(\.rawValue)
        scopes = token.scopes?.map(\.description)
        description = token.description
        createdAt = token.createdAt
    }
}

/// The JSON form of an ``Event``.
public struct EventDocument: Codable, Hashable, Sendable {
    public var type: Event.Kind
    public var revision: Revision
    public var key: String
    public var at: Date
    public var item: ItemDocument?
    public var prevItem: ItemDocument?
    /// Who made the change; absent when it was recorded without attribution (unknown).
    public var by: Principal?
    /// Why, when whoever made the change said.
    public var message: String?

    /// The document for an event.
    public init(_ event: Event) {
        type = event.kind
        revision = event.revision
        key = event.key.path
        at = event.at
        item = event.item.map(ItemDocument.init)
        prevItem = event.prevItem.map(ItemDocument.init)
        by = event.attribution?.principal
        message = event.attribution?.message
    }

    /// The event this document describes.
    public func event() throws -> Event {
        Event(
            kind: type, revision: revision, key: try Key(key), at: at, item: try item?.item(), prevItem: try prevItem?.item(),
            attribution: by.map { Attribution(principal: $0, message: message) }
        )
    }
}

/// The JSON form of a ``ConfigInfo``.
public struct ConfigDocument: Codable, Hashable, Sendable {
    public var name: String
    public var revision: Revision
    public var compactedRevision: Revision
    public var created: Date
    public var modified: Date
    public var settings: ConfigSettings
    /// How many keys it holds; absent when the store does not know.
    public var keyCount: Int?
    /// The bytes of its keys' paths and values; absent when the store does not know yet.
    public var byteCount: Int?

    /// The document for a config.
    public init(_ info: ConfigInfo) {
        name = info.name.rawValue
        revision = info.revision
        compactedRevision = info.compactedRevision
        created = info.createdAt
        modified = info.modifiedAt
        settings = info.settings
        keyCount = info.keyCount
        byteCount = info.byteCount
    }

    /// The config description this document holds.
    public func info() throws -> ConfigInfo {
        ConfigInfo(
            name: try ConfigName(name), revision: revision, compactedRevision: compactedRevision, createdAt: created, modifiedAt: modified, settings: settings, keyCount: keyCount, byteCount: byteCount
        )
    }
}

/// The JSON form of a ``DiscfgError``.
public struct ErrorDocument: Codable, Hashable, Sendable {
    public var code: DiscfgError.Code
    public var message: String
    public var field: String?
    /// For `schemaViolation`: every violation, `{key, pointer, keyword, message, schema}`.
    public var violations: [SchemaViolation]?
    /// For a failure of the server or its store: the id under which its log has the details.
    public var correlationId: String?

    /// The document for an error.
    public init(_ error: DiscfgError) {
        code = error.code
        message = error.message
        field = error.field
        violations = error.violations.isEmpty ? nil : error.violations
        correlationId = error.correlationID
    }
}

/// The one response shape of discfg, as the original had it: an `action`, the `item`
/// and `prevItem` it touched, and the config `revision`, plus whatever else the action
/// returns. Fields that do not apply are left out.
public struct Envelope: Codable, Hashable, Sendable {
    public var action: String
    public var config: String?
    public var currentDiscfg: String?
    public var item: ItemDocument?
    public var prevItem: ItemDocument?
    public var revision: Revision?
    public var compactedRevision: Revision?
    public var at: Date?
    public var items: [ItemDocument]?
    public var prefixes: [String]?
    public var cursor: String?
    public var events: [EventDocument]?
    public var event: EventDocument?
    public var configInfo: ConfigDocument?
    public var configs: [ConfigDocument]?
    public var unchanged: Int?
    /// A person-readable outcome; on a change, the change's own message, when it gave one.
    public var message: String?
    /// Who made the change (a change's envelope, `txn`, `import`, `document`).
    public var by: Principal?
    public var error: ErrorDocument?
    /// The DynamoDB table behind the store (`init`, `info`, `update` on a DynamoDB store).
    public var table: TableDocument?
    /// Whether a transaction's comparisons all held, so its `success` branch ran (`txn`).
    public var succeeded: Bool?
    /// What each operation of a transaction's branch did, in order (`txn`).
    public var responses: [TransactionResponseDocument]?
    /// A new bearer token, shown this once (`token-create`).
    public var token: String?
    /// The id of the token created or revoked (`token-create`, `token-revoke`): the 12
    /// hex digits after `dcfg_`, what `token revoke` and `DELETE /admin/tokens/{id}` take.
    public var id: String?
    /// Token records, never the tokens (`tokens`, `token-create`, `token-revoke`).
    public var tokens: [TokenDocument]?
    /// The name of an encryption key made here (`key-init`): what `--encryption` takes
    /// and a config's `settings.encryption.key` holds, such as `file:///…/default.key`.
    public var encryptionKey: String?
    /// What breaks a schema: after a schema attached with `force` (`schema-set`).
    public var violations: [SchemaViolation]?
    /// A config's schemas, by target (`schemas`).
    public var schemas: [SchemaDocument]?
    /// A staged deployment: the one read, started or moved (`deployment`, `deploy-start`,
    /// `deploy-change`).
    public var deployment: DeploymentDocument?
    /// A config's staged deployments, running first (`deployments`).
    public var deployments: [DeploymentDocument]?
    /// A deployment's health, its reports added up (`deployment-health`).
    public var health: HealthDocument?
    /// A deployment's health reports, one per reporter (`deployment-health`).
    public var reports: [HealthReport]?

    /// Creates an envelope for `action`.
    public init(action: String) {
        self.action = action
    }

    enum CodingKeys: String, CodingKey {
        case action, config, currentDiscfg, item, prevItem, revision, compactedRevision, at, items, prefixes, cursor, events, event, by
        case configInfo = "info"
        case configs, unchanged, message, error, table
        case succeeded, responses, token, id, tokens, encryptionKey, violations, schemas, deployment, deployments, health, reports
    }

    /// The envelope for a change: the item after, the item before, the new revision.
    public init(action: String, config: ConfigName, change: Event) {
        self.init(action: action)
        self.config = config.rawValue
        item = change.item.map(ItemDocument.init)
        prevItem = change.prevItem.map(ItemDocument.init)
        revision = change.revision
        at = change.at
        attribute(change.attribution)
    }

    /// Names who made the change and why (`by`, `message`).
    mutating func attribute(_ attribution: Attribution?) {
        by = attribution?.principal
        message = attribution?.message
    }

    /// Who made the change this envelope describes and why; nil when it does not say.
    public var attribution: Attribution? {
        by.map { Attribution(principal: $0, message: message) }
    }

    /// The envelope for a change of many keys at once, `import` or `document`: each
    /// change, how many keys already held their value, and the config's revision after.
    public init(action: String, config: ConfigName, changes result: ImportResult) {
        self.init(action: action)
        self.config = config.rawValue
        events = result.events.map(EventDocument.init)
        unchanged = result.unchanged
        revision = result.revision
        attribute(result.events.first?.attribution)
    }

    /// The envelope for a transaction's result (`POST /v1/{config}/txn`, `discfg txn`):
    /// whether it succeeded, the config's revision after it, the time of its change when
    /// it made one, and one response per operation of the branch that ran.
    public init(config: ConfigName, transaction result: TransactionResult) {
        self.init(action: "txn")
        self.config = config.rawValue
        succeeded = result.succeeded
        revision = result.revision
        at = result.events.first?.at
        responses = result.responses.map(TransactionResponseDocument.init)
        attribute(result.events.first?.attribution)
    }

    /// The envelope for a token just issued (`token-create`, from `POST /admin/tokens`
    /// and `discfg token create` alike): the token, shown this once, its id and its record.
    public init(issuedToken token: String, record: TokenDocument) {
        self.init(action: "token-create")
        self.token = token
        id = record.id
        tokens = [record]
    }

    /// The envelope for a revoked token (`token-revoke`): its id and its record.
    public init(revokedToken record: TokenDocument) {
        self.init(action: "token-revoke")
        id = record.id
        tokens = [record]
    }

    /// The envelope listing token records (`tokens`): never the tokens themselves.
    public init(tokens records: [TokenDocument]) {
        self.init(action: "tokens")
        tokens = records
    }

    /// The envelope for a failure, carrying the current item of a failed condition.
    public init(action: String, error: DiscfgError) {
        self.init(action: action)
        self.error = ErrorDocument(error)
        item = error.currentItem.map(ItemDocument.init)
    }
}
