import DiscfgCore
import DiscfgJSON
import Foundation

/// The one writer of discfg's JSON envelopes: for the API (compact) and the CLI's
/// `-f json` (``pretty(_:)``). It writes straight into a buffer, byte for byte what
/// `JSONEncoder.discfg()` writes for `Envelope` — keys in byte order, absent fields left
/// out, `/` unescaped, dates as ``TimestampFormat`` text — at a fraction of the cost of
/// `Codable`. `JSONEncoder` stays as the test oracle (`EnvelopeJSONTests`), which fails
/// when a field of `Envelope` is not written here.
///
/// ```swift
/// let line = EnvelopeJSON.data(Envelope(action: "get", error: error))
/// ```
public enum EnvelopeJSON {
    /// `envelope` as compact JSON.
    public static func bytes(_ envelope: Envelope) -> [UInt8] {
        withBytes(envelope) { Array($0) }
    }

    /// `envelope` as compact JSON, lent to `body` where it was written: a server copies
    /// it into its buffer at once.
    public static func withBytes<R>(_ envelope: Envelope, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var json = JSONBytes()
        encode(envelope, to: &json)
        return try json.withBytes(body)
    }

    private static func encode(_ envelope: Envelope, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("action", &buffer); buffer.writeJSONString(envelope.action)
        if let at = envelope.at { object.key("at", &buffer); buffer.writeJSONTimestamp(at) }
        if let by = envelope.by { object.key("by", &buffer); write(by, to: &buffer) }
        if let compacted = envelope.compactedRevision { object.key("compactedRevision", &buffer); buffer.writeJSONNumber(compacted.rawValue) }
        if let config = envelope.config { object.key("config", &buffer); buffer.writeJSONString(config) }
        if let configs = envelope.configs { object.key("configs", &buffer); writeArray(configs, to: &buffer, write) }
        if let current = envelope.currentDiscfg { object.key("currentDiscfg", &buffer); buffer.writeJSONString(current) }
        if let cursor = envelope.cursor { object.key("cursor", &buffer); buffer.writeJSONString(cursor) }
        if let deployment = envelope.deployment { object.key("deployment", &buffer); write(deployment, to: &buffer) }
        if let deployments = envelope.deployments { object.key("deployments", &buffer); writeArray(deployments, to: &buffer, write) }
        if let encryptionKey = envelope.encryptionKey { object.key("encryptionKey", &buffer); buffer.writeJSONString(encryptionKey) }
        if let error = envelope.error { object.key("error", &buffer); write(error, to: &buffer) }
        if let event = envelope.event { object.key("event", &buffer); write(event, to: &buffer) }
        if let events = envelope.events { object.key("events", &buffer); writeArray(events, to: &buffer, write) }
        if let health = envelope.health { object.key("health", &buffer); write(health, to: &buffer) }
        if let id = envelope.id { object.key("id", &buffer); buffer.writeJSONString(id) }
        if let info = envelope.configInfo { object.key("info", &buffer); write(info, to: &buffer) }
        if let item = envelope.item { object.key("item", &buffer); write(item, to: &buffer) }
        if let items = envelope.items { object.key("items", &buffer); writeArray(items, to: &buffer, write) }
        if let message = envelope.message { object.key("message", &buffer); buffer.writeJSONString(message) }
        if let prefixes = envelope.prefixes { object.key("prefixes", &buffer); writeArray(prefixes, to: &buffer) { $1.writeJSONString($0) } }
        if let prevItem = envelope.prevItem { object.key("prevItem", &buffer); write(prevItem, to: &buffer) }
        if let reports = envelope.reports { object.key("reports", &buffer); writeArray(reports, to: &buffer, write) }
        if let responses = envelope.responses { object.key("responses", &buffer); writeArray(responses, to: &buffer, write) }
        if let revision = envelope.revision { object.key("revision", &buffer); buffer.writeJSONNumber(revision.rawValue) }
        if let schemas = envelope.schemas { object.key("schemas", &buffer); writeArray(schemas, to: &buffer, write) }
        if let succeeded = envelope.succeeded { object.key("succeeded", &buffer); buffer.writeJSONBool(succeeded) }
        if let table = envelope.table { object.key("table", &buffer); write(table, to: &buffer) }
        if let token = envelope.token { object.key("token", &buffer); buffer.writeJSONString(token) }
        if let tokens = envelope.tokens { object.key("tokens", &buffer); writeArray(tokens, to: &buffer, write) }
        if let unchanged = envelope.unchanged { object.key("unchanged", &buffer); buffer.writeJSONNumber(unchanged) }
        if let violations = envelope.violations { object.key("violations", &buffer); writeArray(violations, to: &buffer, write) }
        object.close(&buffer)
    }

    /// `envelope` as compact JSON.
    public static func data(_ envelope: Envelope) -> Data {
        Data(bytes(envelope))
    }

    /// `envelope` as indented JSON for people (`discfg … -f json`), laid out as
    /// `JSONEncoder`'s `.prettyPrinted` lays it out: two spaces a level, `"key" : value`,
    /// and an empty list as `[`, a blank line, `]`.
    public static func pretty(_ envelope: Envelope) -> Data {
        Data(JSONSerializer.indented(bytes(envelope), layout: .foundation))
    }

    /// One event as compact JSON, as in an envelope's `events`.
    public static func bytes(_ event: EventDocument) -> [UInt8] {
        var json = JSONBytes()
        write(event, to: &json)
        return json.bytes
    }

    private static func write(_ event: EventDocument, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("at", &buffer); buffer.writeJSONTimestamp(event.at)
        if let by = event.by { object.key("by", &buffer); write(by, to: &buffer) }
        if let item = event.item { object.key("item", &buffer); write(item, to: &buffer) }
        object.key("key", &buffer); buffer.writeJSONString(event.key)
        if let message = event.message { object.key("message", &buffer); buffer.writeJSONString(message) }
        if let prevItem = event.prevItem { object.key("prevItem", &buffer); write(prevItem, to: &buffer) }
        object.key("revision", &buffer); buffer.writeJSONNumber(event.revision.rawValue)
        object.key("type", &buffer); buffer.writeJSONString(event.type.rawValue)
        object.close(&buffer)
    }

    static func write(_ principal: Principal, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        if let description = principal.description { object.key("description", &buffer); buffer.writeJSONString(description) }
        object.key("id", &buffer); buffer.writeJSONString(principal.id)
        object.key("kind", &buffer); buffer.writeJSONString(principal.kind.rawValue)
        object.close(&buffer)
    }

    private static func write(_ response: TransactionResponseDocument, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        if let item = response.item { object.key("item", &buffer); write(item, to: &buffer) }
        if let items = response.items { object.key("items", &buffer); writeArray(items, to: &buffer, write) }
        object.key("op", &buffer); buffer.writeJSONString(response.op)
        if let prevItem = response.prevItem { object.key("prevItem", &buffer); write(prevItem, to: &buffer) }
        if let prevItems = response.prevItems { object.key("prevItems", &buffer); writeArray(prevItems, to: &buffer, write) }
        object.close(&buffer)
    }

    private static func write(_ error: ErrorDocument, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("code", &buffer); buffer.writeJSONString(error.code.rawValue)
        if let correlationId = error.correlationId { object.key("correlationId", &buffer); buffer.writeJSONString(correlationId) }
        if let field = error.field { object.key("field", &buffer); buffer.writeJSONString(field) }
        object.key("message", &buffer); buffer.writeJSONString(error.message)
        if let violations = error.violations { object.key("violations", &buffer); writeArray(violations, to: &buffer, write) }
        object.close(&buffer)
    }

    private static func write(_ violation: SchemaViolation, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("key", &buffer); buffer.writeJSONString(violation.key)
        object.key("keyword", &buffer); buffer.writeJSONString(violation.keyword)
        object.key("message", &buffer); buffer.writeJSONString(violation.message)
        object.key("pointer", &buffer); buffer.writeJSONString(violation.pointer)
        if let schema = violation.schema { object.key("schema", &buffer); buffer.writeJSONString(schema) }
        object.close(&buffer)
    }

    private static func write(_ schema: SchemaDocument, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("modified", &buffer); buffer.writeJSONTimestamp(schema.modified)
        object.key("revision", &buffer); buffer.writeJSONNumber(schema.revision.rawValue)
        object.key("schema", &buffer); write(schema.schema, to: &buffer)
        object.key("target", &buffer); buffer.writeJSONString(schema.target)
        object.key("version", &buffer); buffer.writeJSONNumber(schema.version)
        object.close(&buffer)
    }

    /// A JSON value embedded in an envelope: members in byte order (as `JSONEncoder`'s
    /// sorted keys), strings escaped as ``JSONBytes/writeJSONString(_:)`` escapes them,
    /// numbers in their canonical spelling, exact where `JSONEncoder` would round them
    /// through `Double`.
    private static func write(_ value: JSONValue, to buffer: inout JSONBytes) {
        switch value {
        case .null: buffer.writeStaticString("null")
        case .bool(let bool): buffer.writeJSONBool(bool)
        case .number:
            // One number cannot nest, so the serializer's depth limit cannot be reached.
            buffer.writeString((try? JSONSerializer.string(value)) ?? "null")
        case .string(let text): buffer.writeJSONString(text)
        case .array(let items): writeArray(items, to: &buffer, write)
        case .object(let members):
            buffer.writeInteger(UInt8(ascii: "{"))
            for (index, member) in members.members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
                if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
                buffer.writeJSONString(member.key)
                buffer.writeInteger(UInt8(ascii: ":"))
                write(member.value, to: &buffer)
            }
            buffer.writeInteger(UInt8(ascii: "}"))
        }
    }

    /// A deployment's record and the document's own fields, in one object in byte order.
    private static func write(_ document: DeploymentDocument, to buffer: inout JSONBytes) {
        let deployment = document.deployment
        var object = JSONObjectWriter(&buffer)
        object.key("candidate", &buffer)
        var candidate = JSONObjectWriter(&buffer)
        candidate.key("revision", &buffer); buffer.writeJSONNumber(deployment.candidate.revision.rawValue)
        candidate.close(&buffer)
        if let health = document.health { object.key("health", &buffer); write(health, to: &buffer) }
        object.key("id", &buffer); buffer.writeJSONString(deployment.id)
        object.key("message", &buffer); buffer.writeJSONString(deployment.message)
        object.key("now", &buffer); buffer.writeJSONNumber(document.now)
        object.key("prefix", &buffer); buffer.writeJSONString(deployment.prefix.path)
        object.key("running", &buffer); buffer.writeJSONBool(document.running)
        object.key("signals", &buffer); writeArray(deployment.signals, to: &buffer) { $1.writeJSONString($0.text) }
        object.key("stableRevision", &buffer); buffer.writeJSONNumber(deployment.stableRevision.rawValue)
        object.key("startedAt", &buffer); buffer.writeJSONNumber(deployment.startedAt)
        object.key("startedBy", &buffer); buffer.writeJSONString(deployment.startedBy)
        object.key("status", &buffer); write(document.status, to: &buffer)
        object.key("strategy", &buffer); write(deployment.strategy, to: &buffer)
        object.key("transitions", &buffer)
        writeArray(deployment.transitions, to: &buffer) { transition, buffer in
            var object = JSONObjectWriter(&buffer)
            object.key("at", &buffer); buffer.writeJSONNumber(transition.at)
            object.key("by", &buffer); buffer.writeJSONString(transition.by)
            object.key("reason", &buffer); buffer.writeJSONString(transition.reason)
            object.key("state", &buffer); buffer.writeJSONString(transition.state.rawValue)
            object.close(&buffer)
        }
        object.close(&buffer)
    }

    private static func write(_ health: HealthDocument, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("candidate", &buffer); write(health.candidate, to: &buffer)
        object.key("decision", &buffer); buffer.writeJSONString(health.decision)
        if let latest = health.latest { object.key("latest", &buffer); buffer.writeJSONNumber(latest) }
        object.key("reporters", &buffer); buffer.writeJSONNumber(health.reporters)
        object.key("stable", &buffer); write(health.stable, to: &buffer)
        object.close(&buffer)
    }

    private static func write(_ report: HealthReport, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("at", &buffer); buffer.writeJSONNumber(report.at)
        object.key("candidate", &buffer); write(report.candidate, to: &buffer)
        object.key("reporter", &buffer); buffer.writeJSONString(report.reporter)
        object.key("stable", &buffer); write(report.stable, to: &buffer)
        object.close(&buffer)
    }

    private static func write(_ counts: HealthReport.Counts, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("errors", &buffer); buffer.writeJSONNumber(counts.errors)
        object.key("readers", &buffer); buffer.writeJSONNumber(counts.readers)
        object.key("requests", &buffer); buffer.writeJSONNumber(counts.requests)
        object.close(&buffer)
    }

    private static func write(_ status: DeploymentStatusDocument, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        if let bakeLeft = status.bakeLeftMilliseconds { object.key("bakeLeftMilliseconds", &buffer); buffer.writeJSONNumber(bakeLeft) }
        if let nextStepAt = status.nextStepAt { object.key("nextStepAt", &buffer); buffer.writeJSONNumber(nextStepAt) }
        if let pausedIn = status.pausedIn { object.key("pausedIn", &buffer); buffer.writeJSONString(pausedIn.rawValue) }
        object.key("shareBasisPoints", &buffer); buffer.writeJSONNumber(status.shareBasisPoints)
        object.key("state", &buffer); buffer.writeJSONString(status.state.rawValue)
        object.key("step", &buffer); buffer.writeJSONNumber(status.step)
        object.key("stepCount", &buffer); buffer.writeJSONNumber(status.stepCount)
        object.close(&buffer)
    }

    private static func write(_ strategy: DeploymentStrategy, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("bakeSeconds", &buffer); buffer.writeJSONNumber(strategy.bakeSeconds)
        object.key("growth", &buffer); buffer.writeJSONString(strategy.growth.rawValue)
        object.key("intervalSeconds", &buffer); buffer.writeJSONNumber(strategy.intervalSeconds)
        if let name = strategy.name { object.key("name", &buffer); buffer.writeJSONString(name) }
        object.key("rollbackSeconds", &buffer); buffer.writeJSONNumber(strategy.rollbackSeconds)
        object.key("stepBasisPoints", &buffer); buffer.writeJSONNumber(strategy.stepBasisPoints)
        object.close(&buffer)
    }

    private static func write(_ info: ConfigDocument, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        if let byteCount = info.byteCount { object.key("byteCount", &buffer); buffer.writeJSONNumber(byteCount) }
        object.key("compactedRevision", &buffer); buffer.writeJSONNumber(info.compactedRevision.rawValue)
        object.key("created", &buffer); buffer.writeJSONTimestamp(info.created)
        if let keyCount = info.keyCount { object.key("keyCount", &buffer); buffer.writeJSONNumber(keyCount) }
        object.key("modified", &buffer); buffer.writeJSONTimestamp(info.modified)
        object.key("name", &buffer); buffer.writeJSONString(info.name)
        object.key("revision", &buffer); buffer.writeJSONNumber(info.revision.rawValue)
        object.key("settings", &buffer); write(info.settings, to: &buffer)
        object.close(&buffer)
    }

    private static func write(_ settings: ConfigSettings, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        if !settings.alarms.isEmpty {
            object.key("alarms", &buffer)
            writeArray(settings.alarms.sorted(), to: &buffer) { alarm, buffer in buffer.writeJSONString(alarm.name) }
        }
        if let description = settings.description { object.key("description", &buffer); buffer.writeJSONString(description) }
        if let encryption = settings.encryption { object.key("encryption", &buffer); write(encryption, to: &buffer) }
        object.key("history", &buffer); buffer.writeJSONString(settings.history.text)
        if !settings.notify.isEmpty { object.key("notify", &buffer); writeArray(settings.notify, to: &buffer, write) }
        if let quotaBytes = settings.quotaBytes { object.key("quotaBytes", &buffer); buffer.writeJSONNumber(quotaBytes) }
        object.close(&buffer)
    }

    private static func write(_ encryption: EncryptionSettings, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("current", &buffer); buffer.writeJSONString(encryption.current)
        object.key("dataKeys", &buffer)
        writeArray(encryption.dataKeys, to: &buffer) { dataKey, buffer in
            var object = JSONObjectWriter(&buffer)
            if let created = dataKey.created { object.key("created", &buffer); buffer.writeJSONString(TimestampFormat.string(from: created)) }
            object.key("id", &buffer); buffer.writeJSONString(dataKey.id)
            object.key("wrapped", &buffer); buffer.writeJSONString(dataKey.wrapped)
            object.close(&buffer)
        }
        object.key("key", &buffer); buffer.writeJSONString(encryption.key)
        object.close(&buffer)
    }

    private static func write(_ target: NotificationTarget, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        switch target {
        case .eventBridge(let bus):
            object.key("bus", &buffer); buffer.writeJSONString(bus)
            object.key("type", &buffer); buffer.writeJSONString("eventbridge")
        case .webhook(let url, let secret):
            if let secret { object.key("secret", &buffer); buffer.writeJSONString(secret) }
            object.key("type", &buffer); buffer.writeJSONString("webhook")
            object.key("url", &buffer); buffer.writeJSONString(url)
        }
        object.close(&buffer)
    }

    private static func write(_ token: TokenDocument, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        if let configs = token.configs { object.key("configs", &buffer); writeArray(configs, to: &buffer) { $1.writeJSONString($0) } }
        object.key("createdAt", &buffer); buffer.writeJSONTimestamp(token.createdAt)
        if let description = token.description { object.key("description", &buffer); buffer.writeJSONString(description) }
        object.key("id", &buffer); buffer.writeJSONString(token.id)
        object.key("role", &buffer); buffer.writeJSONString(token.role.rawValue)
        if let scopes = token.scopes { object.key("scopes", &buffer); writeArray(scopes, to: &buffer) { $1.writeJSONString($0) } }
        object.close(&buffer)
    }

    private static func write(_ table: TableDocument, to buffer: inout JSONBytes) {
        var object = JSONObjectWriter(&buffer)
        object.key("billingMode", &buffer); buffer.writeJSONString(table.billingMode)
        object.key("itemCount", &buffer); buffer.writeJSONNumber(table.itemCount)
        object.key("name", &buffer); buffer.writeJSONString(table.name)
        if let read = table.readCapacity { object.key("readCapacity", &buffer); buffer.writeJSONNumber(read) }
        object.key("status", &buffer); buffer.writeJSONString(table.status)
        if let stream = table.stream { object.key("stream", &buffer); buffer.writeJSONString(stream) }
        object.key("timeToLive", &buffer); buffer.writeJSONString(table.timeToLive)
        if let write = table.writeCapacity { object.key("writeCapacity", &buffer); buffer.writeJSONNumber(write) }
        object.close(&buffer)
    }

    private static func writeArray<Element>(_ elements: [Element], to buffer: inout JSONBytes, _ write: (Element, inout JSONBytes) -> Void) {
        buffer.writeInteger(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            write(element, &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "]"))
    }
}
