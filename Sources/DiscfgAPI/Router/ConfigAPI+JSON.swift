import DiscfgCore
import DiscfgJSON
import DiscfgService
import DiscfgWire
import Foundation
import HTTPTypes
import Hummingbird

/// JSON in values over REST: a pointer's part of a value, patches, and the keys under a
/// prefix as one document.
extension ConfigAPI {
    /// `GET keys/{key}?path=POINTER`: the part of the item's JSON value the pointer names.
    /// With `?raw`, that JSON alone; without, the item's envelope whose `value` is that
    /// part's JSON text. The entity tag is the key's, as for the whole value.
    func partAnswer(_ item: Item, pointer: JSONPointer, _ request: Request, in config: ConfigName, atRevision revision: Revision?) throws -> Response {
        let part = try JSONContent.bytes(try JSONContent.value(at: pointer, in: item))
        if try request.flag("raw") {
            var headers = RawValueHeaders.fields(for: JSONContent.mediaType)
            headers[.eTag] = ETag.value(item.modRevision)
            return APIResponse.bytes(part, contentType: JSONContent.mediaType, headers: headers)
        }
        var shown = item
        shown.value = part
        return try itemAnswer(shown, request, in: config, atRevision: revision)
    }

    /// `PATCH keys/{key}`: a merge patch (`application/merge-patch+json`) or a JSON patch
    /// (`application/json-patch+json`) applied inside the store's change, under the same
    /// conditions a `PUT` takes. Answered as a `PUT` is, with action `patch`.
    func patch(_ request: inout Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let key = try Key(request.pathRemainder(context))
        let conditions = try request.conditions()
        let change = try await perform(Action(.patch, on: config, reaching: .key(key))) {
            let body = try await request.bodyData(limit: Limits.maxPatchBytes)
            let patch = try ValuePatch(body: body, mediaType: request.headers[.contentType])
            return try await RequestDeadlines.commit { try await store.patch(key, patch, in: config, conditions: conditions) }
        }
        return APIResponse.json(Envelope(action: Endpoint.patchKey.action, config: config, change: change), headers: [.eTag: ETag.value(change.revision)])
    }

    /// `GET keys/{prefix}?document` (and `GET keys?document[&prefix=]`): the keys under the
    /// prefix as one JSON object, now or at `?revision`, with the revision it was read at
    /// in `X-Discfg-Revision`. The document is written as text value by value
    /// (``ConfigStore/documentText(under:in:atRevision:maxBytes:)``), never held parsed,
    /// and at most ``Options/maxDocumentReads`` are built and sent at once: a read's turn
    /// is held until its answer is written, so a reader that does not read cannot pile up
    /// answers either.
    func document(_ request: Request, _ context: some DiscfgRequestContext, prefix: String, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let prefix = try KeyPrefix(prefix)
        let revision = try request.revision("revision")
        let entity = try entity(request)
        // A read of the present version may be given a running deployment's candidate.
        let overlay = revision == nil ? try await deploymentOverlay(config) : .none
        let now = options.clock.now().milliseconds
        let candidate = overlay.showsCandidate(under: prefix, entity: entity, at: now)
        let (turn, text, read) = try await perform(Action(.documentRead, on: config, reaching: .prefix(prefix))) {
            // A turn not handed on is given back when it goes (``DocumentReadSlots/Lease``).
            let turn = try await documentReads.acquire()
            guard candidate else {
                let (text, read) = try await store.documentText(under: prefix, in: config, atRevision: revision)
                return (turn, text, read)
            }
            let (items, read) = try await store.items(in: config, under: prefix)
            let tooLarge = DiscfgError(.tooLarge, "the keys under \(prefix) of config \"\(config)\" are too large for one document; read a narrower prefix", field: "document")
            let text = try KeyDocument.text(overlay.items(items, under: prefix, entity: entity, at: now), under: prefix, maxBytes: Limits.maxSnapshotBytes, tooLarge: tooLarge)
            return (turn, text, read)
        }
        var headers = RawValueHeaders.fields(for: JSONContent.mediaType)
        headers[.discfgRevision] = String(read.rawValue)
        headers[.contentType] = JSONContent.mediaType
        let body = ResponseBody(contentLength: text.count + 1) { writer in
            defer { turn.release() }
            // In pieces, so no second copy of the whole text is made to send it.
            var start = 0
            while start < text.count {
                let end = min(start + 256 * 1024, text.count)
                try await writer.write(ByteBuffer(bytes: text[start..<end]))
                start = end
            }
            try await writer.write(ByteBuffer(bytes: [UInt8(ascii: "\n")]))
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// `PUT keys/{prefix}?document[&replace]` (and `PUT keys?document` for every key): the
    /// body, a JSON object, written as the keys under the prefix in one change.
    func putDocument(_ request: inout Request, _ context: some DiscfgRequestContext, prefix: String, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let prefix = try KeyPrefix(prefix)
        let result = try await perform(Action(.documentWrite, on: config, reaching: .prefix(prefix))) {
            guard try request.flag("document") else {
                throw DiscfgError.invalid("document", "a PUT of a prefix writes its keys as one JSON document: add ?document (…/keys/PREFIX/?document, or …/keys?document for every key)")
            }
            let replace = try request.flag("replace")
            let document = try JSONContent.parse(try await request.bodyData(limit: options.maxImportBytes), key: nil, field: "document")
            return try await RequestDeadlines.commit { try await store.putDocument(document, under: prefix, in: config, replace: replace) }
        }
        return APIResponse.json(Envelope(action: Endpoint.setDocument.action, config: config, changes: result))
    }
}

extension HTTPField.Name {
    /// The config revision an answer was read at, where no item's entity tag says it.
    static let discfgRevision = HTTPField.Name("X-Discfg-Revision")!
}
