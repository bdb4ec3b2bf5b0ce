import DiscfgCore
import DiscfgJSON
import DiscfgService
import DiscfgWire
import Foundation
import Hummingbird

extension ConfigAPI {
    /// `GET keys/{key}`: the item; with `?path`, the part of its JSON value a pointer names;
    /// with `?recursive` or a trailing slash, a listing; with `?document`, the keys under
    /// the path as one JSON document.
    func getOrList(_ request: Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let path = request.pathRemainder(context)
        // Both are documented for this route; a bad one is refused whichever way it goes.
        let revision = try request.revision("revision")
        _ = try request.number(.pageSize)
        _ = try request.number(.pageBytes)
        if try request.flag("document") { return try await document(request, context, prefix: path, perform) }
        let pointer = try request.query("path").map { try JSONContent.pointer(String($0)) }
        let recursive = try request.flag("recursive")
        if recursive || request.endsWithSlash || path.isEmpty {
            guard pointer == nil else { throw Self.pathOnListing }
            return try await list(request, context, prefix: path, recursive: recursive, perform)
        }
        let config = try request.configName(context)
        let key = try Key(path)
        let entity = try entity(request)
        let found = try await perform(Action(.get, on: config, reaching: .key(key))) { try await store.get(key, in: config, atRevision: revision) }
        // A read of the present version may be given a running deployment's candidate.
        let (shown, deployment) = revision == nil ? try await overlaid(found, at: key, in: config, entity: entity) : (found, nil)
        var response = try answer(shown, at: key, pointer: pointer, request, in: config, atRevision: revision)
        if let deployment { response.headers[.discfgDeployment] = deployment }
        return response
    }

    /// The item a reader naming `entity` sees at `key`, and which version of a running
    /// deployment it is (nil when none covers the key).
    private func overlaid(_ found: Item?, at key: Key, in config: ConfigName, entity: String?) async throws -> (Item?, String?) {
        let overlay = try await deploymentOverlay(config)
        guard !overlay.isEmpty else { return (found, nil) }
        let now = options.clock.now().milliseconds
        let version = overlay.version(of: key, entity: entity, at: now)
        countReader(version, entity: entity, in: config)
        return (overlay.item(at: key, live: found, entity: entity, at: now), Self.deploymentHeader(version))
    }

    private func answer(_ found: Item?, at key: Key, pointer: JSONPointer?, _ request: Request, in config: ConfigName, atRevision revision: Revision?) throws -> Response {
        guard let item = found else { throw DiscfgError.keyNotFound(key, in: config, atRevision: revision) }
        let etag = ETag.value(item.modRevision)
        if let ifNoneMatch = request.headers[.ifNoneMatch], ETag.listMatches(ifNoneMatch, ETag.value(item.modRevision)) {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        if let pointer { return try partAnswer(item, pointer: pointer, request, in: config, atRevision: revision) }
        if try request.flag("raw") {
            let contentType = item.contentType ?? "application/octet-stream"
            var headers = RawValueHeaders.fields(for: contentType)
            headers[.eTag] = etag
            return APIResponse.bytes(item.value, contentType: contentType, headers: headers)
        }
        return try itemAnswer(item, request, in: config, atRevision: revision)
    }

    /// The item in its envelope, its values parsed with `?format=json`.
    func itemAnswer(_ item: Item, _ request: Request, in config: ConfigName, atRevision revision: Revision?) throws -> Response {
        let envelope = Self.itemEnvelope(item, in: config, atRevision: revision)
        let response = APIResponse.json(envelope, headers: [.eTag: ETag.value(item.modRevision)])
        return try request.query("format") == "json" ? parsedValues(response, envelope) : response
    }

    /// `?path` given to a listing.
    static let pathOnListing = DiscfgError.invalid("path", "?path reads into one key's value; it cannot be used with a listing (a trailing slash, ?recursive or keys?prefix=)")

    /// The answer to `GET keys/{key}`: the item in its envelope.
    static func itemEnvelope(_ item: Item, in config: ConfigName, atRevision revision: Revision?) -> Envelope {
        var envelope = Envelope(action: "get")
        envelope.config = config.rawValue
        envelope.item = ItemDocument(item)
        envelope.revision = revision
        return envelope
    }

    /// The body of `GET keys/{key}` for the current item, as the event loops serve it
    /// from ``ConfigViews``.
    static func itemBody(_ item: Item, in config: ConfigName) -> ByteBuffer {
        APIResponse.jsonBody(itemEnvelope(item, in: config, atRevision: nil))
    }

    /// `GET keys?prefix=`: a listing; with `?document`, the keys under the prefix (every
    /// key by default) as one JSON document.
    func listOrDocument(_ request: Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let prefix = request.query("prefix") ?? "/"
        // Documented for this route (a document's revision); a bad one is refused whichever way it goes.
        _ = try request.revision("revision")
        if try request.flag("document") { return try await document(request, context, prefix: prefix, perform) }
        if request.query("path") != nil { throw Self.pathOnListing }
        return try await list(request, context, prefix: prefix, recursive: request.flag("recursive"), perform)
    }

    func list(_ request: Request, _ context: some DiscfgRequestContext, prefix: String, recursive: Bool, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let keyPrefix = try KeyPrefix(prefix)
        let limit = try request.number(.pageSize).map { Int($0) } ?? Limits.defaultPageSize
        let query = ListQuery(prefix: keyPrefix, recursive: recursive, limit: limit, cursor: request.query("cursor"), maxBytes: try pageBytes(request))
        let entity = try entity(request)
        let page = try await perform(Action(.list, on: config, reaching: .prefix(keyPrefix))) { try await store.list(in: config, query) }
        let overlay = try await deploymentOverlay(config)
        var envelope = Envelope(action: "list")
        envelope.config = config.rawValue
        envelope.items = (overlay.isEmpty ? page.items : overlay.page(page, of: query, entity: entity, at: options.clock.now().milliseconds)).map(ItemDocument.init)
        envelope.prefixes = recursive ? nil : page.prefixes.map(\.path)
        envelope.revision = page.revision
        envelope.cursor = page.nextCursor
        return APIResponse.json(envelope)
    }

    /// `PUT keys/{key}`: the body is the value. With `?document`, the path is a prefix and
    /// the body the JSON document of the keys under it (``putDocument(_:_:prefix:)``).
    func set(_ request: inout Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        if try request.flag("document") { return try await putDocument(&request, context, prefix: request.pathRemainder(context), perform) }
        let config = try request.configName(context)
        let key = try Key(request.pathRemainder(context))
        let ttl = try request.number(.ttl)
        let options = SetOptions(conditions: try request.conditions(), ttlSeconds: ttl, contentType: Self.storedContentType(request.headers[.contentType]))
        try options.validate()
        let change = try await perform(Action(.set, on: config, reaching: .key(key))) {
            let value = try await request.bodyData(limit: Limits.maxValueBytes)
            return try await RequestDeadlines.commit { try await store.set(key, to: value, in: config, options: options) }
        }
        let answer = Self.setAnswer(change, in: config)
        return APIResponse.bytes(answer.body, contentType: APIResponse.jsonContentType, status: answer.status, headers: [.eTag: answer.etag])
    }

    /// The answer to a `PUT keys/{key}` that made `change`: 201 for a new key, else 200,
    /// as the router and the event loops (``ServerConnection``) give it.
    static func setAnswer(_ change: Event, in config: ConfigName) -> (status: HTTPResponse.Status, etag: String, body: ByteBuffer) {
        (change.prevItem == nil ? .created : .ok, ETag.value(change.revision), APIResponse.jsonBody(action: "set", config: config, change: change))
    }

    /// The content type a `PUT` keeps with its value: the request's, except the one
    /// `curl -d` sends when told nothing, which says nothing about the value.
    static func storedContentType(_ header: String?) -> String? {
        header?.hasPrefix("application/x-www-form-urlencoded") == true ? nil : header
    }

    /// `DELETE keys/{key}`; with `?recursive`, every key under the path
    /// (`keys/db/?recursive`), or under `?prefix=` on `keys` itself. Every key of the
    /// config goes only when asked for by name: `keys?prefix=/&recursive`.
    func delete(_ request: Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let path = request.pathRemainder(context)
        let conditions = try request.conditions()
        let namedPrefix = request.query("prefix")
        if try request.flag("recursive") {
            guard conditions.isEmpty else { throw DiscfgError.invalid("recursive", "conditions apply to one key; they cannot be used with recursive") }
            let prefix: String
            switch (path.isEmpty, namedPrefix) {
            case (false, nil): prefix = path
            case (true, let named?): prefix = named
            case (false, _?):
                throw DiscfgError.invalid("prefix", "name the prefix once: in the path (…/keys/db/?recursive) or as ?prefix=, not both")
            case (true, nil):
                throw DiscfgError.invalid("prefix", "say which keys to delete: …/keys/PREFIX?recursive or …/keys?prefix=PREFIX&recursive (prefix=/ deletes every key of the config)")
            }
            let keyPrefix = try KeyPrefix(prefix)
            let events = try await perform(Action(.deletePrefix, on: config, reaching: .prefix(keyPrefix))) {
                try await RequestDeadlines.commit { try await store.deletePrefix(keyPrefix, in: config) }
            }
            var envelope = Envelope(action: "delete")
            envelope.config = config.rawValue
            envelope.events = events.map(EventDocument.init)
            envelope.revision = events.last?.revision
            return APIResponse.json(envelope)
        }
        guard namedPrefix == nil else { throw DiscfgError.invalid("prefix", "?prefix= deletes a prefix only with recursive: …/keys?prefix=PREFIX&recursive") }
        let key = try Key(path)
        let change = try await perform(Action(.delete, on: config, reaching: .key(key))) {
            try await RequestDeadlines.commit { try await store.delete(key, in: config, conditions: conditions) }
        }
        return APIResponse.json(Envelope(action: "delete", config: config, change: change))
    }

    /// `GET history/{key}`: the key's changes, newest first.
    func history(_ request: Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let key = try Key(request.pathRemainder(context))
        let limit = try request.number(.pageSize).map { Int($0) } ?? Limits.defaultPageSize
        let query = HistoryQuery(limit: limit, before: try request.revision("before"), maxBytes: try pageBytes(request))
        let page = try await perform(Action(.history, on: config, reaching: .key(key))) { try await store.history(of: key, in: config, query) }
        var envelope = Envelope(action: "history")
        envelope.config = config.rawValue
        envelope.events = page.events.map(EventDocument.init)
        envelope.cursor = page.nextBefore.map { String($0.rawValue) }
        envelope.compactedRevision = page.compactedRevision
        return APIResponse.json(envelope)
    }

    /// A page's byte budget: the request's `maxBytes`, at most ``Options/maxPageBytes``.
    /// The store applies it as it reads.
    func pageBytes(_ request: Request) throws -> Int {
        min(options.maxPageBytes, try request.number(.pageBytes).map { Int($0) } ?? .max)
    }

    /// With `?format=json`, values that are JSON text are returned as JSON, not strings.
    private func parsedValues(_ response: Response, _ envelope: Envelope) throws -> Response {
        guard let item = envelope.item, item.encoding == nil,
              let parsed = try? JSONSerialization.jsonObject(with: Data(item.value.utf8), options: [.fragmentsAllowed]),
              case let data = EnvelopeJSON.data(envelope),
              var object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              var itemObject = object["item"] as? [String: Any]
        else { return response }
        itemObject["value"] = parsed
        object["item"] = itemObject
        var body = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        body.append(UInt8(ascii: "\n"))
        // Only the ETag carries over: the length and type belong to the old body.
        var headers: HTTPFields = [:]
        headers[.eTag] = response.headers[.eTag]
        return APIResponse.bytes(body, contentType: APIResponse.jsonContentType, headers: headers)
    }
}
