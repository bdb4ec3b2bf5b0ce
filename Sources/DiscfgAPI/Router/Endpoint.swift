import DiscfgCore
import DiscfgService
import HTTPTypes

/// Every route of the API, declared once: its method, its path (OpenAPI form), the
/// operation it is, the action its envelopes name, and whether it streams.
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
    case listDeployments
    case startDeployment
    case getDeployment
    case changeDeployment
    case reportHealth
    case deploymentHealth
    case recordHealth
    case evaluateFlag
    case evaluateFlags
    case flagEvents
    case appConfigFlags

    /// The HTTP method.
    public var method: HTTPRequest.Method {
        switch self {
        case .document, .listTokens, .listConfigs, .configInfo, .listKeys, .getKey, .history, .watch, .export, .listSchemas, .getSchema, .listDeployments, .getDeployment,
             .flagEvents, .appConfigFlags, .deploymentHealth: .get
        case .sweep, .createToken, .importSnapshot, .transaction, .compact, .startDeployment, .changeDeployment, .evaluateFlag, .evaluateFlags, .recordHealth: .post
        case .createConfig, .setKey, .setDocument, .setSchema, .reportHealth: .put
        case .updateConfig, .patchKey: .patch
        case .revokeToken, .deleteConfig, .deletePrefix, .deleteKey, .deleteSchema: .delete
        }
    }

    /// The path in OpenAPI form: `{config}` is a config name, `{key}` the rest of the
    /// path, `{id}` a token's or a deployment's id, `{action}` what a deployment's change
    /// records, `{flag}` a feature flag's key, `{env}` and `{profile}` AppConfig's
    /// environment and configuration profile.
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
        case .listDeployments, .startDeployment: "/v1/{config}/deployments"
        case .getDeployment: "/v1/{config}/deployments/{id}"
        case .changeDeployment: "/v1/{config}/deployments/{id}/{action}"
        case .reportHealth, .deploymentHealth: "/v1/{config}/deployments/{id}/health"
        case .recordHealth: "/v1/{config}/health"
        case .evaluateFlag: "/v1/{config}/ofrep/v1/evaluate/flags/{flag}"
        case .evaluateFlags: "/v1/{config}/ofrep/v1/evaluate/flags"
        case .flagEvents: "/v1/{config}/ofrep/v1/events"
        case .appConfigFlags: "/applications/{config}/environments/{env}/configurations/{profile}"
        }
    }

    /// The operation it is (``DiscfgService/Action/Kind``): the role it needs and what
    /// it reaches are declared there, once for every face. A route whose requests are
    /// more than one kind (`GET keys/{key}` reads a key, lists or reads a document) is
    /// the kind that says what each of them needs; its handler performs the one it is.
    public var kind: Action.Kind {
        switch self {
        case .document: .describe
        case .sweep: .sweep
        case .listTokens: .tokenList
        case .createToken: .tokenCreate
        case .revokeToken: .tokenRevoke
        case .listConfigs: .configList
        case .createConfig: .configCreate
        case .configInfo: .configInfo
        case .updateConfig: .configUpdate
        case .deleteConfig: .configDelete
        case .listKeys: .list
        case .deletePrefix: .deletePrefix
        case .getKey: .get
        case .setKey: .set
        case .patchKey: .patch
        case .deleteKey: .delete
        case .setDocument: .documentWrite
        case .history: .history
        case .watch: .watch
        case .export: .export
        case .importSnapshot: .importSnapshot
        case .transaction: .txn
        case .compact: .compact
        case .listSchemas: .schemaList
        case .getSchema: .schemaRead
        case .setSchema: .schemaWrite
        case .deleteSchema: .schemaDelete
        case .listDeployments, .getDeployment, .deploymentHealth: .deploymentRead
        case .reportHealth, .recordHealth: .healthReport
        case .startDeployment, .changeDeployment: .deploymentChange
        case .evaluateFlag, .evaluateFlags, .appConfigFlags: .flagEvaluate
        case .flagEvents: .watch
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
        case .listDeployments: "deployments"
        case .startDeployment: "deploy-start"
        case .getDeployment: "deployment"
        case .changeDeployment: "deploy-change"
        case .reportHealth: "health-report"
        case .deploymentHealth: "deployment-health"
        case .recordHealth: "health"
        case .evaluateFlag: "flag-eval"
        case .evaluateFlags: "flag-eval-bulk"
        case .flagEvents: "flag-events"
        case .appConfigFlags: "appconfig-flags"
        }
    }

    /// Whether the route streams or waits for changes, and so keeps its own deadlines
    /// (a long poll's timeout, a stream's life) instead of the request timeout.
    var streams: Bool { self == .watch || self == .flagEvents }

    /// Whether its path names a config.
    var namesConfig: Bool { path.contains("{config}") }

    public var description: String { "\(method.rawValue) \(path)" }
}
