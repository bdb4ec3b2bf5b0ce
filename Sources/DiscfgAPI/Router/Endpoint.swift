import DiscfgCore
import HTTPTypes

/// Every route of the API, declared once: its method, its path (OpenAPI form), who may
/// call it, the action its envelopes name, and whether it streams.
///
/// The router (for `serve` and the Lambda function alike), authorization, 405 with
/// `Allow`, error envelopes and the checks against `docs/openapi.yaml` all read this
/// table. Each property is an exhaustive switch, so a new route does not compile until
/// it says who may call it and which handler answers it (``ConfigAPI/respond(_:_:_:)``).
public enum Endpoint: String, CaseIterable, Sendable, CustomStringConvertible {
    case document
    case sweep
    case listTokens
    case createToken
    case revokeToken
    case listConfigs
    case createConfig
    case configInfo
    case updateConfig
    case deleteConfig
    case listKeys
    case deletePrefix
    case getKey
    case setKey
    case patchKey
    case deleteKey
    case setDocument
    case history
    case watch
    case export
    case importSnapshot
    case transaction
    case compact
    case listSchemas
    case getSchema
    case setSchema
    case deleteSchema

    /// The HTTP method.
    public var method: HTTPRequest.Method {
        switch self {
        case .document, .listTokens, .listConfigs, .configInfo, .listKeys, .getKey, .history, .watch, .export, .listSchemas, .getSchema: .get
        case .sweep, .createToken, .importSnapshot, .transaction, .compact: .post
        case .createConfig, .setKey, .setDocument, .setSchema: .put
        case .updateConfig, .patchKey: .patch
        case .revokeToken, .deleteConfig, .deletePrefix, .deleteKey, .deleteSchema: .delete
        }
    }

    /// The path in OpenAPI form: `{config}` is a config name, `{key}` the rest of the
    /// path, `{id}` a token's id.
    public var path: String {
        switch self {
        case .document: "/openapi.yaml"
        case .sweep: "/admin/sweep"
        case .listTokens, .createToken: "/admin/tokens"
        case .revokeToken: "/admin/tokens/{id}"
        case .listConfigs: "/v1/configs"
        case .createConfig, .configInfo, .updateConfig, .deleteConfig: "/v1/{config}"
        case .listKeys, .deletePrefix, .setDocument: "/v1/{config}/keys"
        case .getKey, .setKey, .patchKey, .deleteKey: "/v1/{config}/keys/{key}"
        case .history: "/v1/{config}/history/{key}"
        case .watch: "/v1/{config}/watch"
        case .export: "/v1/{config}/export"
        case .importSnapshot: "/v1/{config}/import"
        case .transaction: "/v1/{config}/txn"
        case .compact: "/v1/{config}/compact"
        case .listSchemas: "/v1/{config}/schemas"
        case .getSchema, .setSchema, .deleteSchema: "/v1/{config}/schema"
        }
    }

    /// Who may call it.
    public var access: ConfigAPI.Access {
        switch self {
        case .document: .everyone
        case .sweep, .listTokens, .createToken, .revokeToken: .adminOfAll
        case .listConfigs, .configInfo, .listKeys, .getKey, .history, .watch, .export, .listSchemas, .getSchema: .role(.read)
        case .deletePrefix, .setKey, .patchKey, .deleteKey, .setDocument, .importSnapshot, .transaction, .setSchema, .deleteSchema: .role(.write)
        case .createConfig, .updateConfig, .deleteConfig, .compact: .role(.admin)
        }
    }

    /// Whether what the route reaches is the keys it names — one key, a prefix, a
    /// snapshot's or a transaction's keys — which the handler checks against the caller's
    /// prefix scopes (``KeyReach``), rather than the whole config, which only a
    /// whole-config scope reaches (config settings, schemas, compaction).
    public var reachesByKeys: Bool {
        switch self {
        case .listKeys, .deletePrefix, .getKey, .setKey, .patchKey, .deleteKey, .setDocument, .history, .watch, .export, .importSnapshot, .transaction: true
        case .document, .sweep, .listTokens, .createToken, .revokeToken, .listConfigs, .createConfig, .configInfo, .updateConfig, .deleteConfig,
             .compact, .listSchemas, .getSchema, .setSchema, .deleteSchema: false
        }
    }

    /// The `action` of its envelopes, errors included.
    public var action: String {
        switch self {
        case .document: "document"
        case .sweep: "sweep"
        case .listTokens: "tokens"
        case .createToken: "token-create"
        case .revokeToken: "token-revoke"
        case .listConfigs: "configs"
        case .createConfig: "create"
        case .configInfo: "info"
        case .updateConfig: "update"
        case .deleteConfig: "delete-config"
        case .listKeys: "list"
        case .deletePrefix, .deleteKey: "delete"
        case .getKey: "get"
        case .setKey: "set"
        case .patchKey: "patch"
        case .setDocument: "document"
        case .history: "history"
        case .watch: "watch"
        case .export: "export"
        case .importSnapshot: "import"
        case .transaction: "txn"
        case .compact: "compact"
        case .listSchemas: "schemas"
        case .getSchema: "schema"
        case .setSchema: "schema-set"
        case .deleteSchema: "schema-delete"
        }
    }

    /// Whether the route streams or waits for changes, and so keeps its own deadlines
    /// (a long poll's timeout, a stream's life) instead of the request timeout.
    var streams: Bool { self == .watch }

    /// Whether its path names a config.
    var namesConfig: Bool { path.contains("{config}") }

    public var description: String { "\(method.rawValue) \(path)" }
}
