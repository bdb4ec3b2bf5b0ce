import DiscfgCore
import DiscfgService
import DiscfgNetwork
import DiscfgWire
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Tracing

/// The event loop's fast path for single keys: `GET /v1/{config}/keys/{key}` answered
/// from ``ConfigViews``, and a plain `PUT` of a key handed to the store, both without the
/// router.
///
/// A thin consumer of the API core: it matches the request against the route's own
/// declaration (``Endpoint/getKey``, ``Endpoint/setKey``), asks ``Admission`` (the
/// router's question) with the caller the cached token records name, and answers with the
/// route's own body (``ConfigAPI/itemBody(_:in:)``, ``ConfigAPI/setAnswer(_:in:)``) and
/// heads (``ResponseHeads``). Whatever it does not take — a query, percent-escapes,
/// conditions other than `If-None-Match`, an `Origin`, `Connection` or `Expect` header,
/// a body it cannot see whole, a refusal, a caller the cached records cannot name, a
/// view that is not current — goes on to the router unchanged, which answers it as always.
final class KeyReads: Sendable {
    let views: ConfigViews
    /// The API the router serves: its admission, its store (timed, and telling the views of
    /// each write), its request timeout.
    let api: ConfigAPI
    let logger: Logger
    /// Where the server's spans go; nil when nobody traces. A traced request is taken here
    /// as an untraced one is, with the span the router would give it.
    let tracer: (any Tracer)?
    /// The store as the router sees it.
    var store: any ConfigStore { api.store }
    /// The route as the router's metrics name it.
    static let route = Endpoint.getKey.path.replacingOccurrences(of: "{key}", with: "**")

    init(views: ConfigViews, api: ConfigAPI, logger: Logger, tracer: (any Tracer)? = nil) {
        self.views = views
        self.api = api
        self.logger = logger
        self.tracer = tracer
    }

    /// A read the event loop may answer, or a write it may hand to the store, once its
    /// request has ended: what the request says, not yet judged. Made once from the head
    /// and shared by reference, as ``Write`` is, not copied field by field at every step.
    final class Candidate: Sendable {
        let endpoint: Endpoint
        let configName: String
        let keyPath: String
        let uri: String
        let authority: String?
        let authorization: String?
        let ifNoneMatch: String?
        /// A write's: the body's length and its content type.
        let contentLength: Int
        let contentType: String?
        /// A write's `Discfg-Message` header, as sent.
        let message: String?
        /// When its head arrived (the event loop's clock, read once per read from the socket).
        let start: NIODeadline
        /// The caller's trace, as its headers carry it; read only when the server traces.
        let trace: ServiceContext?
        var isWrite: Bool { endpoint == .setKey }

        init(
            endpoint: Endpoint, configName: String, keyPath: String, uri: String, authority: String?, authorization: String?,
            ifNoneMatch: String?, contentLength: Int, contentType: String?, message: String?, start: NIODeadline, trace: ServiceContext?
        ) {
            self.endpoint = endpoint
            self.configName = configName
            self.keyPath = keyPath
            self.uri = uri
            self.authority = authority
            self.authorization = authorization
            self.ifNoneMatch = ifNoneMatch
            self.contentLength = contentLength
            self.contentType = contentType
            self.message = message
            self.start = start
            self.trace = trace
        }

        /// How long since the head arrived.
        var elapsed: Duration { .nanoseconds((NIODeadline.now() - start).nanoseconds) }
    }

    /// The read or write `head` asks for, if the event loop may take it: an HTTP/1.1
    /// request of ``Endpoint/getKey`` or ``Endpoint/setKey`` naming one key, a write of at
    /// most ``Limits/maxValueBytes`` with no conditions; it arrived at `now`.
    func candidate(_ head: HTTPRequestHead, now: NIODeadline) -> Candidate? {
        let endpoint: Endpoint
        switch head.method {
        case Self.readMethod: endpoint = .getKey
        case Self.writeMethod: endpoint = .setKey
        default: return nil
        }
        guard head.version == .http1_1, let (configName, keyPath) = Self.keyPath.match(head.uri) else { return nil }
        let isWrite = endpoint == .setKey
        var authority: String?, authorization: String?, ifNoneMatch: String?, contentType: String?, message: String?
        var contentLength: Int?
        for (name, value) in head.headers {
            switch name.utf8.count {
            case 4 where Self.named(name, "host"): authority = value
            case 6 where Self.named(name, "origin"), 6 where Self.named(name, "expect"): return nil
            case 10 where Self.named(name, "connection"): return nil
            case 13 where Self.named(name, "authorization"): authorization = value
            case 13 where Self.named(name, "if-none-match"):
                guard !isWrite, ifNoneMatch == nil else { return nil }
                ifNoneMatch = value
            case 8 where Self.named(name, "if-match"): return nil
            case 12 where Self.named(name, "content-type"): contentType = value
            case 14 where Self.named(name, "content-length"):
                guard contentLength == nil, let length = Int(value), length >= 0, length <= (isWrite ? Limits.maxValueBytes : 0) else { return nil }
                contentLength = length
            case 14 where Self.named(name, "discfg-message"):
                guard isWrite, message == nil else { return nil }
                message = value
            case 17 where Self.named(name, "transfer-encoding"): return nil
            // A reader naming an entity may read a deployment's candidate: the router overlays it.
            case 13 where Self.named(name, "discfg-entity"), 9 where Self.named(name, "entity-id"): return nil
            default: break
            }
        }
        guard !isWrite || contentLength != nil else { return nil }
        var trace: ServiceContext?
        if let tracer {
            var context = ServiceContext.current ?? .topLevel
            tracer.extract(head.headers, into: &context, using: HTTPHeadersExtractor())
            trace = context
        }
        return Candidate(
            endpoint: endpoint, configName: configName, keyPath: keyPath, uri: head.uri, authority: authority, authorization: authorization,
            ifNoneMatch: ifNoneMatch, contentLength: contentLength ?? 0, contentType: contentType, message: message, start: now, trace: trace
        )
    }

    /// The caller `candidate` admits, or nil for the router to judge: a refusal (which
    /// the router gives as this same ``Admission`` says, and a key outside the caller's
    /// prefix scopes as the gate says), or a caller the cached token records cannot
    /// name.
    func admitted(_ candidate: Candidate, peerIsLoopback: Bool?, certificate: CertificateSubject? = nil) -> Admission.Admitted? {
        guard let caller = api.authenticator.cachedIdentity(authorization: candidate.authorization, peerIsLoopback: peerIsLoopback, certificate: certificate),
              case .success(let admitted) = api.admission.admit(
                  candidate.endpoint, Admission.Head(authority: candidate.authority, configName: candidate.configName), caller: caller
              )
        else { return nil }
        // A caller of whole configs was judged above; one of prefixes, by the key, as the
        // router's handler has the gate judge it.
        if admitted.caller.scopes != nil, let config = admitted.config {
            guard let key = try? Key(candidate.keyPath), Gate.admits(Action(candidate.endpoint.kind, on: config, reaching: .key(key)), for: admitted.caller) else {
                return nil
            }
        }
        return admitted
    }

    /// A write the event loop takes: where, what, how, who makes it and why, and its span
    /// when the server traces. A reference, made once: it travels from the event loop to
    /// the store's task and back to the answer, and each copy of so many fields as a tuple
    /// cost a write a runtime copy of every one of them.
    final class Write: Sendable {
        let config: ConfigName
        let key: Key
        let value: Data
        let options: SetOptions
        let caller: Caller
        let message: String?
        let span: (any Span)?

        init(config: ConfigName, key: Key, value: Data, options: SetOptions, caller: Caller, message: String?, span: (any Span)?) {
            self.config = config
            self.key = key
            self.value = value
            self.options = options
            self.caller = caller
            self.message = message
            self.span = span
        }
    }

    /// What a write the event loop takes needs: the config, key, value and options,
    /// checked as the route checks them; nil when the router should judge the request.
    func write(
        _ candidate: Candidate, body: ByteBuffer, peerIsLoopback: Bool?, certificate: CertificateSubject? = nil
    ) -> Write? {
        guard candidate.isWrite, let admitted = admitted(candidate, peerIsLoopback: peerIsLoopback, certificate: certificate),
              let config = admitted.config, let key = try? Key(candidate.keyPath)
        else { return nil }
        let options = SetOptions(conditions: [], ttlSeconds: nil, contentType: ConfigAPI.storedContentType(candidate.contentType))
        guard (try? options.validate()) != nil else { return nil }
        // Who: the caller admitted, as on the router; a message it refuses goes there too.
        guard let message = try? candidate.message.flatMap(ChangeMessageHeader.message) as String?? else { return nil }
        return Write(
            config: config, key: key, value: Data(body.readableBytesView), options: options, caller: admitted.caller, message: message, span: span(candidate)
        )
    }

    /// Commits a write the event loop took, within the deadline every routed request
    /// has (``ConfigAPI/Options/requestTimeout``), which the pipeline applies: the store
    /// fits its retries inside it, and a store that cannot answer in time fails with
    /// `unavailable`.
    func commit(_ write: Write) async -> Result<Event, any Error> {
        do {
            let store = api.store
            let operation = Action(.set, on: write.config, reaching: .key(write.key))
            let deadline = Deadline.after(api.options.requestTimeout)
            // The one chain, as the router's handler runs it: the write begins with the step.
            let perform = {
                try await Pipeline.perform(operation, by: write.caller, message: write.message, deadline: deadline) {
                    try await store.set(write.key, to: write.value, in: write.config, options: write.options)
                }
            }
            // The store's span a child of the request's, as on the router.
            guard let span = write.span else { return .success(try await perform()) }
            return .success(try await ServiceContext.$current.withValue(span.context, operation: perform))
        } catch {
            return .failure(error)
        }
    }

    /// The answer to a write the store finished: the route's, its audit line noted in `log`.
    func answer(
        write result: Result<Event, any Error>, _ write: Write, candidate: Candidate, log: AccessLog.Buffer?
    ) -> (head: ResponseHeads.WriteHead, body: ByteBuffer) {
        let head: ResponseHeads.WriteHead
        let body: ByteBuffer
        var record = AccessLog.Record(
            kind: .write, path: candidate.uri, config: candidate.configName, key: candidate.keyPath, principal: write.caller.principal,
            status: 0, start: candidate.start, elapsed: .zero
        )
        switch result {
        case .success(let change):
            let answer = ConfigAPI.setAnswer(change, in: write.config)
            (head, body) = (.change(answer.status, etag: answer.etag), answer.body)
            record.revision = change.revision
        case .failure(let error):
            // Already as the caller may see it (``Pipeline``).
            let shown = FailurePolicy.shown(error, logger: logger)
            let parts = APIResponse.errorParts(shown, action: candidate.endpoint.action)
            (head, body) = (.refusal(ResponseHeads.envelope(parts.status, parts.headers, body: parts.body)), parts.body)
            record.error = shown.code
        }
        record.status = head.status.code
        record.elapsed = candidate.elapsed
        log?.append(record)
        if let span = write.span { Self.finish(span, status: record.status) }
        return (head, body)
    }

    /// The answer to `candidate` from the views, noted in `log`: the item's, and whether
    /// it is `304` (its `If-None-Match` names the item's tag) rather than `200`, whose
    /// heads are ``ResponseHeads/item(_:)`` and ``ResponseHeads/notModified(_:)``; nil
    /// for the router to give.
    func answer(
        _ candidate: Candidate, peerIsLoopback: Bool?, certificate: CertificateSubject? = nil, log: AccessLog.Buffer?
    ) -> (answer: ItemAnswer, notModified: Bool)? {
        guard !candidate.isWrite, let admitted = admitted(candidate, peerIsLoopback: peerIsLoopback, certificate: certificate),
              let config = admitted.config, case .found(_, let answer) = views.lookup(keyPath: candidate.keyPath, configName: candidate.configName),
              // The read is the pipeline's action as the router's handler would perform
              // it; found in a view, its key is a key.
              (try? Pipeline.admit(Action(.get, on: config, reaching: .key(Key(stored: candidate.keyPath))), by: admitted.caller)) != nil
        else { return nil }
        let notModified = candidate.ifNoneMatch.map { ETag.listMatches($0, answer.etag) } ?? false
        let status = notModified ? HTTPResponse.Status.notModified.code : HTTPResponse.Status.ok.code
        if let span = span(candidate) { Self.finish(span, status: status) }
        log?.append(AccessLog.Record(
            kind: .viewRead, path: candidate.uri, config: candidate.configName, key: candidate.keyPath, principal: admitted.caller.principal,
            status: status, start: candidate.start, elapsed: candidate.elapsed
        ))
        return (answer, notModified)
    }

    /// The server span the router's tracing gives a request of this route
    /// (``TracingMiddleware``), started now; nil when nobody traces.
    private func span(_ candidate: Candidate) -> (any Span)? {
        guard let tracer, let trace = candidate.trace else { return nil }
        let method = candidate.endpoint.method.rawValue
        let span = tracer.startAnySpan(method, context: trace, ofKind: .server)
        span.attributes["http.request.method"] = method
        span.attributes["url.path"] = candidate.uri
        return span
    }

    /// Ends a request's span as the router's tracing ends it.
    private static func finish(_ span: any Span, status: Int) {
        let method = span.operationName
        span.operationName = "\(method) \(route)"
        span.attributes["http.route"] = route
        span.attributes["http.response.status_code"] = status
        if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        span.end()
    }

    /// The methods of the routes taken here, in HTTP/1's terms.
    private static let readMethod = HTTPMethod(Endpoint.getKey.method)
    private static let writeMethod = HTTPMethod(Endpoint.setKey.method)

    /// Their path, as declared.
    private static let keyPath = KeyPathPattern(Endpoint.getKey.path)

    /// Whether a header name is `lowercase`, ignoring ASCII case.
    private static func named(_ name: String, _ lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard name.utf8.count == count else { return false }
        var index = 0
        for byte in name.utf8 {
            let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            guard lowered == lowercase.utf8Start[index] else { return false }
            index += 1
        }
        return true
    }
}

/// A route path of the form `PREFIX{config}MIDDLE{key}` (``Endpoint/path``), matched
/// against a request target without a query or percent-escapes, naming one key (no
/// trailing slash): the config name and the key's path (with its leading slash) as sent.
struct KeyPathPattern: Sendable {
    private let prefix: [UInt8]
    private let middle: [UInt8]

    init(_ path: String) {
        let afterConfig = path.components(separatedBy: "{config}")
        precondition(afterConfig.count == 2 && afterConfig[1].hasSuffix("{key}"), "\(path) is not PREFIX{config}MIDDLE{key}")
        prefix = Array(afterConfig[0].utf8)
        // The key keeps its leading slash: MIDDLE's last byte.
        middle = Array(afterConfig[1].dropLast("{key}".count).dropLast().utf8)
    }

    /// The config name and key path of `uri`, or nil when it does not match.
    func match(_ uri: String) -> (configName: String, keyPath: String)? {
        let split: (configEnd: Int, keyStart: Int)?? = uri.utf8.withContiguousStorageIfAvailable { bytes in
            let count = bytes.count
            guard count > prefix.count + middle.count + 2, bytes.starts(with: prefix), bytes[count - 1] != UInt8(ascii: "/") else { return nil }
            var index = prefix.count
            while index < count, bytes[index] != UInt8(ascii: "/") { index += 1 }
            let configEnd = index
            let keyStart = configEnd + middle.count
            // The key: its slash and at least one more byte.
            guard configEnd > prefix.count, keyStart + 1 < count, bytes[configEnd..<keyStart].elementsEqual(middle),
                  bytes[keyStart] == UInt8(ascii: "/")
            else { return nil }
            for byte in bytes[keyStart...] where byte == UInt8(ascii: "?") || byte == UInt8(ascii: "%") { return nil }
            return (configEnd, keyStart)
        }
        guard case let (configEnd, keyStart)?? = split else { return nil }
        let utf8 = uri.utf8
        let configName = String(Substring(utf8[utf8.index(utf8.startIndex, offsetBy: prefix.count)..<utf8.index(utf8.startIndex, offsetBy: configEnd)]))
        let keyPath = String(Substring(utf8[utf8.index(utf8.startIndex, offsetBy: keyStart)...]))
        return (configName, keyPath)
    }
}

/// Reads the tracer's propagation headers from an HTTP/1 request head.
struct HTTPHeadersExtractor: Extractor {
    func extract(key: String, from headers: HTTPHeaders) -> String? {
        headers.first(name: key)
    }
}
