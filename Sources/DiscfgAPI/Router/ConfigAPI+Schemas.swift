import DiscfgCore
import DiscfgWire
import Foundation
import Hummingbird

/// The JSON Schemas of a config: listed, read, attached and removed. Every change the
/// store makes is checked against them (``SchemaEnforcement``); these routes only manage
/// them.
extension ConfigAPI {
    /// `GET schemas`: every schema of the config, by target.
    func listSchemas(_ request: Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        var envelope = Envelope(action: Endpoint.listSchemas.action)
        envelope.config = config.rawValue
        envelope.schemas = try await store.schemas(in: config).map { try SchemaDocument(target: $0.target, item: $0.item) }
        return APIResponse.json(envelope)
    }

    /// `GET schema?target=PATH[&revision=N]`: the schema itself, its entity tag the
    /// modRevision of the key it is kept at.
    func getSchema(_ request: Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        let revision = try request.revision("revision")
        let target = try Self.schemaTarget(request)
        guard let item = try await store.get(target.storageKey, in: config, atRevision: revision) else {
            let when = revision.map { " at revision \($0.rawValue)" } ?? ""
            throw DiscfgError(.keyNotFound, "\(target) has no schema in config \"\(config)\"\(when)", field: "target")
        }
        let etag = ETag.value(item.modRevision)
        if let ifNoneMatch = request.headers[.ifNoneMatch], ETag.listMatches(ifNoneMatch, etag) {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        var headers = RawValueHeaders.fields(for: SchemaDocument.mediaType)
        headers[.eTag] = etag
        return APIResponse.bytes(item.value, contentType: SchemaDocument.mediaType, headers: headers)
    }

    /// `PUT schema?target=PATH[&force]`: attaches the body as the target's schema (or
    /// replaces it). Refused with `schemaViolation` when what the target holds breaks it,
    /// unless forced; then the answer lists what breaks it in `violations`.
    func setSchema(_ request: inout Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        let target = try Self.schemaTarget(request)
        let force = try request.flag("force")
        let schema = try await request.bodyData(limit: Limits.maxValueBytes)
        let change = try await RequestDeadlines.commit { try await store.setSchema(target, to: schema, in: config, force: force) }
        var envelope = Envelope(action: Endpoint.setSchema.action, config: config, change: change.event)
        envelope.violations = change.violations.isEmpty ? nil : change.violations
        return APIResponse.json(envelope, status: change.event.prevItem == nil ? .created : .ok, headers: [.eTag: ETag.value(change.event.revision)])
    }

    /// `DELETE schema?target=PATH`: removes the target's schema.
    func deleteSchema(_ request: Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        let target = try Self.schemaTarget(request)
        let change = try await RequestDeadlines.commit { try await store.setSchema(target, to: nil, in: config, force: false) }
        return APIResponse.json(Envelope(action: Endpoint.deleteSchema.action, config: config, change: change.event))
    }

    /// The `target` query parameter: a key (`/app/settings`) or a prefix (`/app/`, `/`).
    static func schemaTarget(_ request: Request) throws -> SchemaTarget {
        guard let text = request.query("target") else {
            throw DiscfgError.invalid("target", "say what the schema is for: ?target=/app/settings (a key) or ?target=/app/ (the keys under a prefix, as one document)")
        }
        do {
            return try SchemaTarget(String(text))
        } catch var error as DiscfgError {
            error.field = "target"
            throw error
        }
    }
}
