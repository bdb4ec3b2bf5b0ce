@testable import DiscfgAPI
import DiscfgCore
import DiscfgWire
import Foundation
import Hummingbird
import Testing

@Suite("API: the one envelope writer matches JSONEncoder byte for byte, compact and indented")
struct EnvelopeJSONTests {
    static let awkward: String = {
        var text = ""
        for value in 0..<0x80 { text.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        return text + "\u{80}\u{9F}\u{A0}\u{2028}\u{2029}\u{FEFF}é😀/a\\b\"c"
    }()

    static func item(_ key: String, _ value: Data, contentType: String? = nil, expires: Date? = nil, modified: Date = Date(milliseconds: 1_767_225_600_123)) throws -> Item {
        Item(
            key: try Key(key), value: value, contentType: contentType, version: 3, createRevision: Revision(7),
            modRevision: Revision(UInt64.max), modifiedAt: modified, expiresAt: expires
        )
    }

    /// A schema as `GET schemas` lists it.
    static func schemaDocument(_ text: String, target: String = "/app/settings") throws -> SchemaDocument {
        let target = try SchemaTarget(target)
        return try SchemaDocument(target: target, item: try item(target.storageKey.path, Data(text.utf8)))
    }

    /// A paused deployment of a predefined strategy with every kind of signal, and a
    /// custom one rolling back, as documents at an instant.
    static func deploymentDocuments() throws -> [DeploymentDocument] {
        let start: Int64 = 1_767_225_600_000
        var paused = try Deployment(
            id: "00000000000000a1", prefix: try KeyPrefix("/app/"), stableRevision: Revision(41), candidate: DeploymentCandidate(revision: Revision(42)),
            strategy: try DeploymentStrategy.predefined(named: "Linear20PercentEvery6Minutes"), startedAt: start, message: awkward, startedBy: "token:0123456789ab",
            signals: [.alarm("checkout \"5xx\""), .http("https://h.example/health?a=b"), .health]
        )
        paused = try paused.pause(at: start + 420_000, by: "local:ana@laptop", reason: "watching \(awkward)")
        var rolling = try Deployment(
            id: "ffffffffffffffff", prefix: .root, stableRevision: .zero, candidate: DeploymentCandidate(revision: Revision(UInt64(Int64.max))),
            strategy: try DeploymentStrategy(growth: .exponential, stepBasisPoints: 1250, intervalSeconds: 60, bakeSeconds: 0, rollbackSeconds: 600),
            startedAt: 0, message: "", startedBy: "system:monitor", signals: []
        )
        rolling = try rolling.rollback(at: 90_000, by: "system:monitor", signal: .health, reading: "worse")
        let baking = try Deployment(
            id: "0000000000000001", prefix: .root, stableRevision: Revision(1), candidate: DeploymentCandidate(revision: Revision(2)),
            strategy: try DeploymentStrategy.predefined(named: "AllAtOnce"), startedAt: start, message: "m", startedBy: "anonymous:anonymous", signals: []
        )
        return [
            DeploymentDocument(paused, running: true, at: start + 500_000), DeploymentDocument(rolling, running: true, at: 120_000),
            DeploymentDocument(baking, running: true, at: start + 1), DeploymentDocument(baking, running: false, at: start + 3_600_000),
        ]
    }

    static func envelopes() throws -> [Envelope] {
        let plain = try item("/db/host", Data("db1.internal:5432".utf8))
        let typed = try item("/app/doc", Data(#"{"a": [1, 2], "b": "x\ny"}"#.utf8), contentType: "application/json; charset=utf-8", expires: Date(milliseconds: 1_800_000_000_000))
        let binary = try item("/bin/blob", Data([0, 159, 146, 150, 255]))
        let old = try item("/old", Data(awkward.utf8), modified: Date(milliseconds: -62_135_596_800_000 + 1))
        let early = try item("/early", Data(), modified: Date(milliseconds: -1))
        let put = Event(kind: .put, revision: Revision(9), key: plain.key, at: Date(milliseconds: 1_767_225_600_999), item: plain, prevItem: typed)
        let delete = Event(kind: .delete, revision: Revision(10), key: binary.key, at: Date(milliseconds: 0), item: nil, prevItem: binary)
        let expire = Event(kind: .expire, revision: Revision(11), key: old.key, at: Date(milliseconds: 86_399_999), item: nil, prevItem: nil)

        var list = Envelope(action: "list")
        list.config = "my.app-prod_1"
        list.items = [plain, typed, binary, old, early].map(ItemDocument.init)
        list.prefixes = ["/a/", "/b\"/", awkward]
        list.revision = Revision(42)
        list.cursor = "next/\(awkward)"
        var emptyList = Envelope(action: "list")
        emptyList.items = []
        emptyList.prefixes = []
        var history = Envelope(action: "history")
        history.events = [put, delete, expire].map(EventDocument.init)
        history.compactedRevision = Revision(2)
        history.cursor = "8"
        var watch = Envelope(action: "watch")
        watch.event = EventDocument(put)
        watch.currentDiscfg = "1.2.3"
        watch.unchanged = 0
        var imported = Envelope(action: "import")
        imported.unchanged = 12
        imported.message = awkward
        var got = Envelope(action: "get")
        got.config = "c"
        got.item = ItemDocument(typed)
        got.revision = Revision(5)
        var failed = Envelope(action: "set", error: DiscfgError(.conditionFailed, "key \(awkward) changed", field: "If-Match"))
        failed.item = ItemDocument(plain)
        let settings = ConfigSettings(
            history: .last(100), description: "payments \(awkward)",
            notify: [.webhook(url: "https://hooks.example/a?b=c", secret: "s3\"cret"), .webhook(url: "https://h.example/", secret: nil), .eventBridge(bus: "default")],
            alarms: [RaisedAlarm(.noSpace, member: .max), .noSpace, RaisedAlarm(.noSpace, member: 0)]
        )
        let info = ConfigDocument(ConfigInfo(
            name: try ConfigName("my.app"), revision: Revision(UInt64.max), compactedRevision: Revision(3),
            createdAt: Date(milliseconds: -1), modifiedAt: Date(milliseconds: 1_767_225_600_123), settings: settings
        ))
        let plainInfo = ConfigDocument(ConfigInfo(name: try ConfigName("c"), revision: .zero, createdAt: Date(milliseconds: 0), modifiedAt: Date(milliseconds: 0), settings: ConfigSettings()))
        var configInfo = Envelope(action: "info")
        configInfo.config = "my.app"
        configInfo.configInfo = info
        configInfo.revision = Revision(UInt64.max)
        configInfo.table = TableDocument(name: "discfg", status: "ACTIVE", billingMode: "PROVISIONED", readCapacity: 5, writeCapacity: 0, itemCount: 12, stream: "NEW_IMAGE", timeToLive: "ENABLED")
        var configs = Envelope(action: "configs")
        configs.configs = [info, plainInfo]
        var noConfigs = Envelope(action: "configs")
        noConfigs.configs = []
        var transaction = Envelope(action: "txn")
        transaction.config = "c"
        transaction.succeeded = true
        transaction.revision = Revision(9)
        transaction.at = put.at
        transaction.responses = [
            .put(put), .put(Event(kind: .put, revision: Revision(9), key: typed.key, at: put.at, item: typed, prevItem: nil)),
            .delete([delete, Event(kind: .delete, revision: Revision(9), key: old.key, at: put.at, item: nil, prevItem: old)]), .delete([]),
            .get([plain, binary, early]), .get([]),
        ].map(TransactionResponseDocument.init)
        var failedTransaction = Envelope(action: "txn")
        failedTransaction.succeeded = false
        failedTransaction.revision = .zero
        failedTransaction.responses = []
        var tokens = Envelope(action: "token-create")
        tokens.token = "dcfg_0123456789ab_s3cr/t"
        tokens.tokens = [
            TokenDocument(AccessToken(id: "0123456789ab", hash: Data(), role: .admin, createdAt: Date(milliseconds: 1))),
            TokenDocument(AccessToken(id: "ba9876543210", hash: Data([1]), role: .read, configs: [], description: "", createdAt: Date(milliseconds: 2))),
        ]
        var table = Envelope(action: "init")
        table.table = TableDocument(name: "t", status: "CREATING", billingMode: "PAY_PER_REQUEST", readCapacity: nil, writeCapacity: nil, itemCount: 0, stream: nil, timeToLive: "DISABLED")
        var violated = Envelope(action: "set", error: DiscfgError(
            .schemaViolation, "schema violation, nothing was changed: \(awkward)", field: "value",
            violations: [
                SchemaViolation(key: "/app/db", pointer: "/port", keyword: "maximum", message: "must be ≤ 65535"),
                SchemaViolation(key: "/app/", pointer: "", keyword: "required", message: "missing \"\(awkward)\""),
            ]
        ))
        violated.config = "c"
        var forced = Envelope(action: "schema-set", config: try ConfigName("c"), change: put)
        forced.violations = [SchemaViolation(key: awkward, pointer: "/a~1b/0", keyword: "type", message: "must be integer")]
        var schemas = Envelope(action: "schemas")
        schemas.config = "c"
        schemas.schemas = [
            try Self.schemaDocument(#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": ["port"], "properties": {"port": {"type": "integer", "maximum": 65535, "multipleOf": 0.5}, "b\"\u0001é": {"enum": [null, true, false, -3, "/x"]}, "a": {}}}"#),
            try Self.schemaDocument("true", target: "/app/"),
        ]
        var noSchemas = Envelope(action: "schemas")
        noSchemas.schemas = []
        var deployments = Envelope(action: "deployments")
        deployments.deployments = try Self.deploymentDocuments()
        var deployed = Envelope(action: "deploy-start")
        deployed.deployment = try Self.deploymentDocuments().first
        deployed.events = [put].map(EventDocument.init)
        return [
            deployments, deployed,
            violated, forced, schemas, noSchemas,
            configInfo, configs, noConfigs, table, tokens,
            Envelope(action: "get"),
            got,
            Envelope(action: "set", config: try ConfigName("c"), change: put),
            Envelope(action: "delete", config: try ConfigName("c"), change: delete),
            list, emptyList, history, watch, imported, failed, transaction, failedTransaction,
            Envelope(action: "get", error: DiscfgError(.keyNotFound, "no key", field: nil)),
            Envelope(action: awkward),
        ]
    }

    @Test("every field, escapes, dates, binary values, settings, tables and empty lists")
    func matchesJSONEncoder() throws {
        let encoder = JSONEncoder.discfg(pretty: false)
        for envelope in try Self.envelopes() {
            let expected = try encoder.encode(envelope)
            #expect(String(decoding: EnvelopeJSON.data(envelope), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }
    }

    @Test("a change's envelope written from its event is the envelope's own JSON, byte for byte")
    func changeEnvelopeMatches() throws {
        let plain = try Self.item("/db/host", Data("db1.internal:5432".utf8))
        let typed = try Self.item("/app/doc", Data(#"{"a": "x\ny"}"#.utf8), contentType: "application/json", expires: Date(milliseconds: 1_800_000_000_000))
        let binary = try Self.item("/bin/blob", Data([0, 159, 146, 150, 255]))
        let awkward = try Self.item("/old", Data(Self.awkward.utf8), modified: Date(milliseconds: -62_135_596_800_000 + 1))
        let token = Principal(kind: .token, id: "0123456789ab", description: Self.awkward)
        let changes = [
            Event(kind: .put, revision: Revision(9), key: plain.key, at: Date(milliseconds: 1_767_225_600_999), item: plain, prevItem: typed),
            Event(kind: .put, revision: Revision(UInt64.max), key: binary.key, at: Date(milliseconds: 0), item: binary, prevItem: nil,
                  attribution: Attribution(principal: token, message: Self.awkward)),
            Event(kind: .put, revision: Revision(1), key: awkward.key, at: Date(milliseconds: -1), item: awkward, prevItem: awkward,
                  attribution: Attribution(principal: Principal(kind: .local, id: "ana@laptop"))),
            Event(kind: .delete, revision: Revision(10), key: binary.key, at: Date(milliseconds: 86_399_999), item: nil, prevItem: binary),
        ]
        let encoder = JSONEncoder.discfg(pretty: false)
        for (change, action) in zip(changes, ["set", "patch", Self.awkward, "delete"]) {
            let envelope = Envelope(action: action, config: try ConfigName("my.app-prod_1"), change: change)
            let written = EnvelopeJSON.withBytes(action: action, config: try ConfigName("my.app-prod_1"), change: change) { String(decoding: $0, as: UTF8.self) }
            #expect(written == String(decoding: EnvelopeJSON.bytes(envelope), as: UTF8.self))
            #expect(written == String(decoding: try encoder.encode(envelope), as: UTF8.self))
        }
    }

    @Test("the indented form is JSONEncoder's prettyPrinted, byte for byte")
    func prettyMatchesJSONEncoder() throws {
        let encoder = JSONEncoder.discfg(pretty: true)
        for envelope in try Self.envelopes() {
            let expected = String(decoding: try encoder.encode(envelope), as: UTF8.self)
            let written = String(decoding: EnvelopeJSON.pretty(envelope), as: UTF8.self)
            #expect(written == expected)
        }
    }

    /// Every stored field of `Envelope`, and an envelope that sets it. A field added to
    /// `Envelope` fails the test below until it is listed here, and so until the writer
    /// is shown to write it.
    static func singleFieldEnvelopes() throws -> [String: Envelope] {
        let item = ItemDocument(try Self.item("/k", Data("v".utf8)))
        let event = EventDocument(Event(kind: .put, revision: Revision(3), key: try Key("/k"), at: Date(milliseconds: 5), item: try Self.item("/k", Data("v".utf8)), prevItem: nil))
        let info = ConfigDocument(ConfigInfo(name: try ConfigName("c"), revision: .zero, createdAt: Date(milliseconds: 0), modifiedAt: Date(milliseconds: 0), settings: ConfigSettings()))
        let token = TokenDocument(AccessToken(id: "0123456789ab", hash: Data(), role: .write, configs: [try ConfigName("c")], description: "web \"tier\"", createdAt: Date(milliseconds: 9)))
        let schema = try Self.schemaDocument(#"{"type": "object"}"#)
        var deployment = try Self.deploymentDocuments()[1]
        let reports = [
            try HealthReport(reporter: "web-1#\"a\"", stable: .init(requests: 900, errors: 2, readers: 40), candidate: .init(requests: UInt64.max, errors: 9, readers: 5), at: 1_767_226_020_000),
        ]
        let health = HealthDocument(DeploymentHealth(reports))
        deployment.health = health
        let setters: [String: (inout Envelope) -> Void] = [
            "action": { _ in },
            "config": { $0.config = "c" },
            "currentDiscfg": { $0.currentDiscfg = "1.0" },
            "item": { $0.item = item },
            "prevItem": { $0.prevItem = item },
            "revision": { $0.revision = Revision(4) },
            "compactedRevision": { $0.compactedRevision = Revision(1) },
            "at": { $0.at = Date(milliseconds: 7) },
            "items": { $0.items = [item] },
            "prefixes": { $0.prefixes = ["/a/"] },
            "cursor": { $0.cursor = "/k" },
            "events": { $0.events = [event] },
            "event": { $0.event = event },
            "configInfo": { $0.configInfo = info },
            "configs": { $0.configs = [info] },
            "unchanged": { $0.unchanged = 2 },
            "message": { $0.message = "m" },
            "by": { $0.by = Principal(kind: .token, id: "0123456789ab", description: "web \"tier\"\u{1}") },
            "error": { $0.error = ErrorDocument(DiscfgError(.keyNotFound, "no key", field: "key")) },
            "table": { $0.table = TableDocument(name: "t", status: "ACTIVE", billingMode: "PAY_PER_REQUEST", readCapacity: nil, writeCapacity: nil, itemCount: 0, stream: nil, timeToLive: "ENABLED") },
            "succeeded": { $0.succeeded = false },
            "responses": { $0.responses = [TransactionResponseDocument(.get([]))] },
            "token": { $0.token = "dcfg_0123456789ab_secret" },
            "id": { $0.id = "0123456789ab" },
            "tokens": { $0.tokens = [token] },
            "encryptionKey": { $0.encryptionKey = "file:///home/me/.config/discfg/keys/default.key" },
            "violations": { $0.violations = [SchemaViolation(key: "/k", pointer: "/port", keyword: "maximum", message: "must be ≤ 65535")] },
            "schemas": { $0.schemas = [schema] },
            "deployment": { $0.deployment = deployment },
            "deployments": { $0.deployments = [deployment] },
            "health": { $0.health = health },
            "reports": { $0.reports = reports },
        ]
        var envelopes: [String: Envelope] = [:]
        for child in Mirror(reflecting: Envelope(action: "x")).children {
            let field = try #require(child.label)
            let set = try #require(setters[field], "Envelope has a field \(field) this test does not know: teach EnvelopeJSON to write it, then list it here")
            var envelope = Envelope(action: "x")
            set(&envelope)
            envelopes[field] = envelope
        }
        return envelopes
    }

    @Test("no field of Envelope is dropped by the writer: each is written as JSONEncoder writes it")
    func everyFieldReachesTheWire() throws {
        let encoder = JSONEncoder.discfg(pretty: false)
        for (field, envelope) in try Self.singleFieldEnvelopes() {
            let expected = String(decoding: try encoder.encode(envelope), as: UTF8.self)
            #expect(String(decoding: EnvelopeJSON.data(envelope), as: UTF8.self) == expected, "\(field)")
            let name = field == "configInfo" ? "info" : field
            #expect(field == "action" || expected.contains("\"\(name)\":"), "\(field) is encoded at all")
        }
    }

    @Test("a deployment document reads back as it was written: the record, running, the status and the server's clock")
    func deploymentDocumentsRoundTrip() throws {
        for document in try Self.deploymentDocuments() {
            var envelope = Envelope(action: "deployment")
            envelope.deployment = document
            let read = try JSONDecoder.discfg().decode(Envelope.self, from: EnvelopeJSON.data(envelope))
            #expect(read.deployment == document)
        }
        let paused = try Self.deploymentDocuments()[0]
        #expect(paused.status.state == .paused && paused.status.pausedIn == .deploying && paused.status.shareBasisPoints == 4000)
        let rolling = try Self.deploymentDocuments()[1]
        #expect(rolling.status.state == .rollingBack && rolling.status.nextStepAt != nil)
        let baking = try Self.deploymentDocuments()[2]
        #expect(baking.status.state == .baking && baking.status.bakeLeftMilliseconds == 599_999)
    }

    @Test("a deployment document whose record is not one the state machine could write is refused")
    func deploymentDocumentIsReadStrictly() throws {
        let envelope = String(decoding: EnvelopeJSON.data({
            var envelope = Envelope(action: "deployment")
            envelope.deployment = try? Self.deploymentDocuments()[0]
            return envelope
        }()), as: UTF8.self)
        for (from, to) in [(#""state":"PAUSED""#, #""state":"RESUMED""#), (#""running":true"#, #""running":true,"extra":1"#)] {
            #expect(envelope.contains(from))
            let broken = envelope.replacingOccurrences(of: from, with: to)
            #expect(throws: (any Error).self, "\(to)") { try JSONDecoder.discfg().decode(Envelope.self, from: Data(broken.utf8)) }
        }
    }
}
