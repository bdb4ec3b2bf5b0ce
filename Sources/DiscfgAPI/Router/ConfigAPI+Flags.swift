import DiscfgCore
import DiscfgFlags
import DiscfgJSON
import DiscfgService
import DiscfgWire
import Foundation
import HTTPTypes
import Hummingbird

/// Feature flags over the OpenFeature Remote Evaluation Protocol (``OFREP``), with base URL
/// `/v1/{config}`: each evaluation is a read of the config's flag sets (the keys under
/// ``DiscfgCore/ConfigFlags/prefix``), judged by the gate like any read, so a caller scoped
/// away from `/flags/` is refused (403).
extension ConfigAPI {
    /// `POST ofrep/v1/evaluate/flags/{flag}`: one flag for the body's context.
    func evaluateFlag(_ request: inout Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let raw = context.parameters.get("flag") ?? ""
        // Most flag keys arrive as written; decoding is for the few that needed escapes.
        let key = raw.utf8.contains(UInt8(ascii: "%")) ? raw.removingPercentEncoding ?? raw : raw
        let inputs: (context: JSONObject, catalog: FlagCatalog)
        switch try await evaluationInputs(&request, config, key: key, perform) {
        case .ready(let evaluation, let flags): inputs = (evaluation, flags)
        case .refused(let response): return response
        }
        let (evaluationContext, catalog) = inputs
        let answer = FlagEvaluator().evaluate(key, in: catalog, context: evaluationContext)
        return Self.ofrep(OFREP.document(answer), status: OFREP.status(of: answer))
    }

    /// `POST ofrep/v1/evaluate/flags`: every flag for the body's context, with an `ETag`
    /// over the answer (`If-None-Match` → 304) and the event stream that announces changes.
    func evaluateFlags(_ request: inout Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let inputs: (context: JSONObject, catalog: FlagCatalog)
        switch try await evaluationInputs(&request, config, key: nil, perform) {
        case .ready(let evaluation, let flags): inputs = (evaluation, flags)
        case .refused(let response): return response
        }
        let (evaluationContext, catalog) = inputs
        // API Gateway buffers responses, so Lambda names no stream; pollers still get ETags.
        let stream = context.supportsStreaming ? "/v1/\(config.rawValue)/ofrep/v1/events" : nil
        let bytes = OFREP.bytes(OFREP.bulkDocument(catalog, context: evaluationContext, evaluator: FlagEvaluator(), eventStream: stream))
        let tag = OFREP.entityTag(of: bytes)
        if let list = request.headers[values: .ifNoneMatch].nilIfEmpty?.joined(separator: ","), ETag.listMatches(list, tag) {
            return Response(status: .notModified, headers: [.eTag: tag])
        }
        return APIResponse.bytes(ByteBuffer(bytes: bytes), contentType: APIResponse.jsonContentType, headers: [.eTag: tag])
    }

    /// What an evaluation needs, or the OFREP refusal that answers it instead.
    private enum EvaluationInputs {
        case ready(JSONObject, FlagCatalog)
        case refused(Response)
    }

    /// The body's evaluation context and the config's flags; a body the protocol refuses, or
    /// a flag set that does not parse, is a 400 naming `key` (nil for the bulk evaluation).
    private func evaluationInputs(_ request: inout Request, _ config: ConfigName, key: String?, _ perform: Performer) async throws -> EvaluationInputs {
        let evaluationContext: JSONObject
        do {
            evaluationContext = try OFREP.context(from: try await Self.evaluationBody(&request))
        } catch let refusal as OFREP.Refusal {
            return .refused(Self.ofrep(OFREP.document(refusal, key: key), status: .badRequest))
        }
        do {
            // The flag's own targeting key is the entity a staged deployment of flag sets splits on.
            var entity = try entity(request)
            if case .string(let targetingKey)? = evaluationContext["targetingKey"] { entity = targetingKey }
            return .ready(evaluationContext, try await flagCatalog(config, entity: entity, perform))
        } catch let error as DiscfgError where error.field == "value" {
            return .refused(Self.ofrep(OFREP.document(OFREP.Refusal(.parseError, error.message), key: key), status: .badRequest))
        }
    }

    /// The config's flags, read through the pipeline as a read of `/flags/`, parsed once per
    /// change of its flag sets.
    /// A staged deployment of flag sets is evaluated as the overlay shows them to `entity`
    /// (the context's `targetingKey`, else the reader's entity).
    private func flagCatalog(_ config: ConfigName, entity: String?, _ perform: Performer) async throws -> FlagCatalog {
        let items = try await perform(Action(.flagEvaluate, on: config, reaching: .prefix(ConfigFlags.prefix))) {
            try await store.items(in: config, under: ConfigFlags.prefix).items
        }
        let overlay = try await deploymentOverlay(config)
        let now = options.clock.now().milliseconds
        guard overlay.showsCandidate(under: ConfigFlags.prefix, entity: entity, at: now) else {
            return try flagCatalogs.catalog(items, in: config)
        }
        return try flagCatalogs.catalog(overlay.items(items, under: ConfigFlags.prefix, entity: entity, at: now), in: config, candidate: true)
    }

    /// An evaluation request's body, bounded; a larger one is refused as the protocol refuses.
    private static func evaluationBody(_ request: inout Request) async throws -> Data {
        do {
            return try await request.bodyData(limit: OFREP.maxRequestBytes)
        } catch let error as DiscfgError where error.code == .tooLarge {
            throw OFREP.Refusal(.invalidContext, "the request body is over the limit of \(OFREP.maxRequestBytes) bytes for an evaluation request")
        }
    }

    private static func ofrep(_ document: JSONValue, status: HTTPResponse.Status) -> Response {
        APIResponse.bytes(ByteBuffer(bytes: OFREP.bytes(document)), contentType: APIResponse.jsonContentType, status: status)
    }

    /// `GET ofrep/v1/events`: a Server-Sent Events stream that sends OFREP's
    /// `refetchEvaluation` (an `event: message` whose data's `type` says so) once per revision
    /// that changes a key under `/flags/`, with the revision as its id, so `Last-Event-ID`
    /// resumes after the last change seen. Holds one of the server's watch slots.
    func flagEvents(_ request: Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        return try await perform(Action(.watch, on: config, reaching: .prefix(ConfigFlags.prefix))) {
            guard context.supportsStreaming else {
                return EventStream.unsupported(action: Endpoint.flagEvents.action, instead: "poll the bulk evaluation with If-None-Match instead")
            }
            let lastSeen = try request.headers[.lastEventID].map { text throws -> Revision in
                guard let point = ResumePoint(eventID: text.trimmingCharacters(in: .whitespaces)) else {
                    throw DiscfgError.invalid("Last-Event-ID", "Last-Event-ID \"\(String(text.prefix(40)).debugEscaped)\" is not an event id of this stream: a revision such as 12")
                }
                return point.revision
            }
            let from = if let lastSeen { lastSeen.next } else { try await store.configInfo(config).revision.next }
            // Fail before the stream starts when the start revision is already gone.
            _ = try await store.events(in: config, scope: .prefix(ConfigFlags.prefix), from: from, limit: 1)
            guard watches.acquire() else { return watches.refusal() }
            return refetchStream(config: config, from: from, caller: perform.caller)
        }
    }

    /// The stream's body: one `refetchEvaluation` per revision that changed a flag set, with
    /// the revision as its id (``EventStream``).
    private func refetchStream(config: ConfigName, from: Revision, caller: Caller) -> Response {
        let store = store
        let stream = EventStream(
            action: Endpoint.flagEvents.action, opening: "refetchEvaluation for the flags of \(config) from revision \(from)",
            heartbeat: options.heartbeat, backlogBytes: options.streamBacklogBytes, startID: from.previous.description,
            caller: caller, authenticator: authenticator, slots: watches
        )
        return stream.response { sink in
            var last: Revision?
            for try await event in await store.watch(config, scope: .prefix(ConfigFlags.prefix), from: from) where event.revision != last {
                last = event.revision
                guard sink.send(EventStream.Message(id: event.revision.description, event: "message", data: OFREP.refetchEventData)) else { return }
            }
        }
    }
}

extension Array {
    fileprivate var nilIfEmpty: Self? { isEmpty ? nil : self }
}
