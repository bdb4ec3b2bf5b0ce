import AsyncHTTPClient
import DiscfgCore
import DiscfgJSON
import DiscfgWire
import Foundation
import NIOCore
import NIOHTTP1

/// A store that is a discfg server: every operation is a request to its REST API.
///
/// With it, every CLI command works against `discfg serve` (`--store http://host:8899`)
/// and, later, against the Lambda function behind API Gateway. Watch follows the
/// server's Server-Sent Events, reconnecting and resuming from the last revision seen.
///
/// ```swift
/// let store = try RemoteStore(url: URL(string: "http://127.0.0.1:8899")!, token: nil)
/// let item = try await store.get(Key("/db/host"), in: ConfigName("myapp"))
/// ```
public final class RemoteStore: ConfigStore {
    let transport: HTTPTransport
    private let ownsClient: Bool

    /// Connects to the server at `url`.
    /// - Parameters:
    ///   - token: a bearer token, when the server needs one.
    ///   - client: an HTTP client to share; by default the store makes its own.
    ///   - timeout: how long one request may take (watches excepted).
    ///   - signing: signs requests with AWS SigV4 (an API behind API Gateway with IAM
    ///     auth) when no token is given.
    ///   - tls: the CA to trust and the certificate to present over `https://`, for the
    ///     store's own client (a `client` given keeps its own settings); nil for the
    ///     system's CAs and no certificate.
    /// - Throws: `invalidArgument` for a URL that is not a server's, or TLS files that
    ///   cannot be used (``ClientTLS/configuration()``).
    public init(
        url: URL, token: String?, signing: AWSRequestSigning? = nil, client: HTTPClient? = nil, timeout: Duration = .seconds(30), tls: ClientTLS? = nil
    ) throws {
        ownsClient = client == nil
        let seconds = timeout.components.seconds
        let httpClient = try client ?? Self.makeClient(tls: tls)
        do {
            transport = try HTTPTransport(url: url, token: token, signing: signing, client: httpClient, timeout: .seconds(max(1, seconds)))
        } catch {
            if client == nil { httpClient.shutdown { _ in } }
            throw error
        }
    }

    /// The HTTP client a store makes for itself. A refused connection fails its request at
    /// once: the connection pool would try again until its 10 s connect timeout, and the
    /// person at the command line would wait that long to read "connection refused". The
    /// callers that outlive a server's restart (a watch, the agent) retry on their own.
    static func makeClient(tls: ClientTLS?) throws -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        if let tls { configuration.tlsConfiguration = try tls.configuration() }
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    deinit {
        if ownsClient { transport.client.shutdown { _ in } }
    }

    func configPath(_ name: ConfigName) -> String { "/v1/\(URLPart.encode(name.rawValue))" }

    public func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo {
        let body = try JSONEncoder().encode(settings)
        return try await transport.envelope(.PUT, configPath(name), body: body, headers: [("Content-Type", "application/json")]).requireInfo()
    }

    public func deleteConfig(_ name: ConfigName) async throws {
        _ = try await transport.envelope(.DELETE, configPath(name))
    }

    public func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo {
        try patch.checkAlarms()
        let body = try JSONEncoder().encode(patch)
        return try await transport.envelope(.PATCH, configPath(name), body: body, headers: [("Content-Type", "application/json")]).requireInfo()
    }

    public func listConfigs() async throws -> [ConfigInfo] {
        try await transport.envelope(.GET, "/v1/configs").configs?.map { try $0.info() } ?? []
    }

    public func configInfo(_ name: ConfigName) async throws -> ConfigInfo {
        try await Self.configInfo(transport, path: configPath(name))
    }

    static func configInfo(_ transport: HTTPTransport, path: String) async throws -> ConfigInfo {
        try await transport.envelope(.GET, path).requireInfo()
    }

    public func get(_ key: Key, in config: ConfigName, atRevision revision: Revision?) async throws -> Item? {
        let path = configPath(config) + "/keys/" + URLPart.keyPath(key) + URLPart.query([("revision", revision.map { String($0.storageValue) })])
        do {
            return try await transport.envelope(.GET, path).item?.item()
        } catch let error as DiscfgError where error.code == .keyNotFound {
            return nil
        }
    }

    public func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage {
        let path = configPath(config) + "/keys" + URLPart.query([
            ("prefix", query.prefix.path), ("recursive", String(query.recursive)), ("limit", String(query.limit)), ("cursor", query.cursor),
            ("maxBytes", String(query.maxBytes)),
        ])
        let envelope = try await transport.envelope(.GET, path)
        return ListPage(
            items: try envelope.items?.map { try $0.item() } ?? [],
            prefixes: try envelope.prefixes?.map(KeyPrefix.init) ?? [],
            revision: envelope.revision ?? .zero, nextCursor: envelope.cursor
        )
    }

    public func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        try options.validate()
        try Limits.validateValue(value)
        var (headers, query) = try Self.conditionParameters(options.conditions)
        if let contentType = options.contentType { headers.append(("Content-Type", contentType)) }
        query.append(("ttl", options.ttlSeconds.map(String.init)))
        let path = configPath(config) + "/keys/" + URLPart.keyPath(key) + URLPart.query(query)
        return try await transport.envelope(.PUT, path, body: value, headers: headers).requireChange(kind: .put, key: key)
    }

    /// `PATCH /v1/{config}/keys/{key}`, the patch's media type as `Content-Type` and the
    /// conditions as for a set.
    public func patch(_ key: Key, _ patch: ValuePatch, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        var (headers, query) = try Self.conditionParameters(conditions)
        headers.append(("Content-Type", patch.mediaType))
        let body = try JSONContent.bytes(patch.document)
        let path = configPath(config) + "/keys/" + URLPart.keyPath(key) + URLPart.query(query)
        return try await transport.envelope(.PATCH, path, body: body, headers: headers).requireChange(kind: .put, key: key)
    }

    /// `PUT /v1/{config}/keys/{prefix}?document`, with `replace` when asked.
    public func putDocument(_ document: JSONValue, under prefix: KeyPrefix, in config: ConfigName, replace: Bool) async throws -> ImportResult {
        let body = try JSONContent.bytes(document)
        let query: [(String, String?)] = [("document", "true"), ("replace", replace ? "true" : nil)]
        let path = configPath(config) + URLPart.prefixPath(prefix) + URLPart.query(query)
        let envelope = try await transport.envelope(.PUT, path, body: body, headers: [("Content-Type", JSONContent.mediaType)])
        return ImportResult(events: try envelope.events?.map { try $0.event() } ?? [], unchanged: envelope.unchanged ?? 0, revision: envelope.revision ?? .zero)
    }

    /// `PUT` (or, for nil, `DELETE`) `/v1/{config}/schema?target=…`, with `force` when asked.
    public func setSchema(_ target: SchemaTarget, to schema: Data?, in config: ConfigName, force: Bool) async throws -> SchemaChange {
        let query: [(String, String?)] = [("target", target.path), ("force", force ? "true" : nil)]
        let path = configPath(config) + "/schema" + URLPart.query(query)
        guard let schema else {
            let event = try await transport.envelope(.DELETE, path).requireChange(kind: .delete, key: target.storageKey)
            return SchemaChange(event: event, violations: [])
        }
        let envelope = try await transport.envelope(.PUT, path, body: schema, headers: [("Content-Type", "application/schema+json")])
        return SchemaChange(event: try envelope.requireChange(kind: .put, key: target.storageKey), violations: envelope.violations ?? [])
    }

    public func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        let (headers, query) = try Self.conditionParameters(conditions)
        let path = configPath(config) + "/keys/" + URLPart.keyPath(key) + URLPart.query(query)
        return try await transport.envelope(.DELETE, path, headers: headers).requireChange(kind: .delete, key: key)
    }

    public func deletePrefix(_ prefix: KeyPrefix, in config: ConfigName) async throws -> [Event] {
        let path = configPath(config) + "/keys" + URLPart.query([("prefix", prefix.path), ("recursive", "true")])
        return try await transport.envelope(.DELETE, path).events?.map { try $0.event() } ?? []
    }

    /// `POST /v1/{config}/txn`, with the result rebuilt from the envelope: each change
    /// carries the transaction's revision and time, as the server's store made it.
    /// `POST /v1/{config}/compact?revision=N`.
    public func compact(_ config: ConfigName, through revision: Revision) async throws -> ConfigInfo {
        let envelope = try await transport.envelope(.POST, configPath(config) + "/compact" + URLPart.query([("revision", String(revision.storageValue))]))
        guard let info = try envelope.configInfo?.info() else { throw DiscfgError(.unavailable, "the server's answer to compact held no config", field: "store") }
        return info
    }

    public func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult {
        try transaction.validate()
        // The REST API's transactions do not nest: refused here, never sent flattened.
        guard !transaction.nests else {
            throw DiscfgError(
                .invalidArgument,
                "a remote store cannot run a nested transaction: the REST API's transactions do not nest; run it against the store itself, or through the etcd API",
                field: "transaction"
            )
        }
        // The server cannot be told which keys a range may reach: a filtered transaction
        // that compares or deletes over a range is refused, never run over every key (the
        // etcd API's would reach keys it does not own); reads the caller filters itself.
        let rangeCompares = transaction.compares.contains { if case .key = $0.subject { false } else { true } }
        let rangeDeletes = (transaction.success + transaction.failure).contains {
            switch $0 {
            case .deleteRange, .deletePrefix: true
            default: false
            }
        }
        if let filter = transaction.keyFilter, rangeCompares || rangeDeletes {
            throw DiscfgError.invalid("transaction", "a remote store cannot limit a transaction's ranges to \(filter); run this against the store itself")
        }
        let body = try JSONEncoder().encode(TransactionDocument(transaction))
        let send = { try await self.transport.envelope(.POST, self.configPath(config) + "/txn", body: body, headers: [("Content-Type", "application/json")]) }
        // A transaction's own attribution wins over the task's, in the header too; the
        // server records its own caller as who.
        guard let attribution = transaction.attribution else { return try await send().requireTransactionResult() }
        return try await attribution.withValue(operation: send).requireTransactionResult()
    }

    public func history(of key: Key, in config: ConfigName, _ query: HistoryQuery) async throws -> HistoryPage {
        let path = configPath(config) + "/history/" + URLPart.keyPath(key) + URLPart.query([
            ("limit", String(query.limit)), ("before", query.before.map { String($0.storageValue) }), ("maxBytes", String(query.maxBytes)),
        ])
        let envelope = try await transport.envelope(.GET, path)
        return HistoryPage(
            events: try envelope.events?.map { try $0.event() } ?? [],
            nextBefore: envelope.cursor.flatMap(UInt64.init).map { Revision($0) },
            compactedRevision: envelope.compactedRevision ?? .zero
        )
    }

    /// The server applies `limit` and `maxBytes` (at most its own budget); its reply's
    /// cursor says it stopped early with more to read right away.
    public func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int, maxBytes: Int) async throws -> EventBatch {
        try Limits.validatePageSize(limit)
        try Limits.validatePageBytes(maxBytes)
        let envelope = try await transport.envelope(
            .GET, configPath(config) + "/watch" + Self.scopeQuery(scope, from: from, extra: [("timeout", "0"), ("limit", String(limit)), ("maxBytes", String(maxBytes))])
        )
        // A server that sent more than asked is cut back, but never inside a revision.
        var page = EventPage(limit: limit, maxBytes: Int.max)
        for document in envelope.events ?? [] {
            guard page.offer(try document.event()) else { break }
        }
        if page.isFull { return page.batch(latest: from, from: from) }
        return EventBatch(events: page.events, through: envelope.revision ?? from.previous, hasMore: envelope.cursor != nil)
    }

    public func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error> {
        // Pin "now" before returning; if the config cannot be read, the stream reports why.
        var start = from
        if start == nil { start = (try? await configInfo(config))?.revision.next }
        return RemoteWatch(transport: transport, configPath: configPath(config), scope: scope, from: start).stream()
    }

    /// The server's export, at one revision, downloaded and then handed out in pages:
    /// the server streams it from its store a page at a time, but this client still holds
    /// the whole document while decoding it.
    public func exportPages(_ config: ConfigName, maxBytes: Int, atRevision revision: Revision?) async throws -> SnapshotPages {
        try Limits.validatePageBytes(maxBytes)
        let reply = try await transport.send(.GET, configPath(config) + "/export?format=json" + (revision.map { "&revision=\($0.rawValue)" } ?? ""))
        guard reply.status == 200 else { _ = try HTTPTransport.decode(reply, baseURL: transport.baseURL); throw DiscfgError(.unavailable, "export failed") }
        let snapshot = try SnapshotFormat.json.decode(reply.body)
        let header = SnapshotHeader(config: snapshot.config ?? config, revision: snapshot.revision ?? .zero, exportedAt: snapshot.exportedAt ?? Date())
        return SnapshotPages(snapshot, header: header, maxBytes: maxBytes)
    }

    public func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, options: ImportOptions) async throws -> ImportResult {
        try snapshot.validate()
        try options.check(snapshot)
        let body = try SnapshotFormat.json.encode(snapshot)
        let query = URLPart.query([
            ("format", "json"), ("replace", String(options.replace)),
            ("prefix", options.prefix == .root ? nil : options.prefix.path),
            ("replaceSchemas", options.replaceSchemas ? "true" : nil),
            ("ifRevision", options.ifRevision.map { String($0.rawValue) }),
            ("dryRun", options.dryRun ? "true" : nil),
        ])
        let envelope = try await transport.envelope(
            .POST, configPath(config) + "/import" + query, body: body, headers: [("Content-Type", "application/json")]
        )
        return ImportResult(events: try envelope.events?.map { try $0.event() } ?? [], unchanged: envelope.unchanged ?? 0, revision: envelope.revision ?? .zero)
    }

    public func sweepExpired() async throws -> [Event] {
        try await transport.envelope(.POST, "/admin/sweep").events?.map { try $0.event() } ?? []
    }

    /// Conditions as the API takes them: `If-Match` for a revision, query parameters for
    /// the rest. A value condition must be UTF-8 text to travel in a URL.
    static func conditionParameters(_ conditions: [Condition]) throws -> (headers: [(String, String)], query: [(String, String?)]) {
        var headers: [(String, String)] = []
        var query: [(String, String?)] = []
        for condition in conditions {
            switch condition {
            case .version(let version): query.append(("prevVersion", String(version)))
            case .modRevision(let revision): headers.append(("If-Match", "\"\(revision.storageValue)\""))
            case .value(let value):
                guard let text = String(validating: value, as: UTF8.self) else {
                    throw DiscfgError.invalid("condition", "a value condition over HTTP must be UTF-8 text")
                }
                query.append(("prevValue", text))
            case .exists: query.append(("prevExist", "true"))
            }
        }
        return (headers, query)
    }

    static func scopeQuery(_ scope: WatchScope, from: Revision?, extra: [(String, String?)] = []) -> String {
        let scopePair: (String, String?) = switch scope {
        case .key(let key): ("key", key.path)
        case .prefix(let prefix): ("prefix", prefix.path)
        }
        return URLPart.query([scopePair, ("fromRevision", from.map { String($0.storageValue) })] + extra)
    }
}

extension Envelope {
    func requireInfo() throws -> ConfigInfo {
        guard let info = configInfo else { throw DiscfgError(.unavailable, "the server's reply to \(action) had no config info") }
        return try info.info()
    }

    /// The result of a transaction, from the envelope of `POST txn`: a put response is
    /// a put event, a delete response one delete event per item deleted, all at the
    /// envelope's revision and time; `events` are those changes in order.
    func requireTransactionResult() throws -> TransactionResult {
        guard let succeeded, let revision else { throw DiscfgError(.unavailable, "the server's reply to \(action) had no succeeded or revision") }
        var responses: [TransactionResponse] = []
        var events: [Event] = []
        for response in self.responses ?? [] {
            switch response.op {
            case "put":
                guard let item = try response.item?.item() else { throw DiscfgError(.unavailable, "the server's reply to \(action) had a put without its item") }
                let event = Event(
                    kind: .put, revision: revision, key: item.key, at: at ?? item.modifiedAt, item: item, prevItem: try response.prevItem?.item(),
                    attribution: attribution
                )
                events.append(event)
                responses.append(.put(event))
            case "delete":
                let deleted = try (response.prevItems ?? []).map { document in
                    let item = try document.item()
                    return Event(kind: .delete, revision: revision, key: item.key, at: at ?? Date(), item: nil, prevItem: item, attribution: attribution)
                }
                events += deleted
                responses.append(.delete(deleted))
            case "get":
                responses.append(.get(try (response.items ?? []).map { try $0.item() }))
            default:
                throw DiscfgError(.unavailable, "the server's reply to \(action) had a response of unknown op \"\(response.op.debugEscaped)\"")
            }
        }
        return TransactionResult(succeeded: succeeded, revision: revision, responses: responses, events: events)
    }

    /// The change a set or delete made, as an event.
    func requireChange(kind: Event.Kind, key: Key) throws -> Event {
        guard let revision else { throw DiscfgError(.unavailable, "the server's reply to \(action) had no revision") }
        let item = try item?.item()
        return Event(kind: kind, revision: revision, key: key, at: at ?? item?.modifiedAt ?? Date(), item: item, prevItem: try prevItem?.item(), attribution: attribution)
    }
}
