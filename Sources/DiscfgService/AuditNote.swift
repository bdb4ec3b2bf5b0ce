import DiscfgCore
import Synchronization

/// What one request's audit line (``AuditRecord``) says, gathered while the request is
/// answered by whoever learns each part, and made into its line in one place
/// (``record(api:route:_:)``), the same for every face:
///
/// - the pipeline notes the action it ran the request as, and whether the gate refused
///   it (``ActionNote``, which this note binds);
/// - the face notes what it decoded (``update(_:)``): the caller it authenticated, the
///   config, the keys, a transaction's names, the error it answered, the revision its
///   change made;
/// - the transport gives, as it answers, what only it knows (``Answer``): the method,
///   the path, the status.
///
/// A face binds a note around each request (``noting(_:)``) and hands the line to an
/// ``AuditTrail``.
///
/// ```swift
/// let note = AuditNote()
/// let response = try await note.noting { try await next(request) }
/// trail.write(note.record(api: "rest", route: "unmatched", AuditNote.Answer(method: "GET", path: path, status: 200)))
/// ```
public final class AuditNote: Sendable {
    /// The note of the request the current task answers; nil where no line is written.
    @TaskLocal public static var current: AuditNote?

    /// What a face learns of a request as it answers it: everything its line says but
    /// the transport's answer, when it arrived and how long it took.
    public struct Fields: Sendable {
        /// The route as declared (`/v1/{config}/keys/{key}`), or the etcd RPC.
        public var route: String?
        /// Who the face authenticated the caller as; nil when none was.
        public var principal: Principal?
        /// The user name a refused etcd `Auth.Authenticate` gave (``AuditRecord/user``).
        public var user: String?
        /// The config the request names.
        public var config: String?
        /// The key or key prefix the request names, as the face prints it.
        public var key: String?
        /// The prefix a listing, watch or delete names.
        public var prefix: String?
        /// The end of an etcd key range, escaped printable.
        public var rangeEnd: String?
        /// What a transaction compares, reads and changes.
        public var transaction: AuditRecord.TransactionNames?
        /// The code of the error the request was answered with.
        public var error: DiscfgError.Code?
        /// The revision the request's change made.
        public var revision: Revision?
        /// The action the pipeline ran the request as; nil for none.
        public var action: Action.Kind?
        /// Whether the gate refused that action.
        public var refused = false

        /// Fields as a face knows them before the request is answered.
        public init(
            route: String? = nil, principal: Principal? = nil, config: String? = nil, key: String? = nil,
            rangeEnd: String? = nil, error: DiscfgError.Code? = nil, revision: Revision? = nil, action: Action.Kind? = nil
        ) {
            self.route = route
            self.principal = principal
            self.config = config
            self.key = key
            self.rangeEnd = rangeEnd
            self.error = error
            self.revision = revision
            self.action = action
        }
    }

    /// What the transport answered: the HTTP method, path and status (REST, the etcd
    /// JSON gateway's own refusals), or the gRPC status (etcd).
    public struct Answer: Sendable {
        /// The HTTP method.
        public var method: String?
        /// The path as sent, without its query.
        public var path: String?
        /// The HTTP status answered.
        public var status: Int?
        /// The gRPC status, by name (`OK`, `PERMISSION_DENIED`).
        public var grpcStatus: String?

        /// What a transport answered; each part nil where it has none.
        public init(method: String? = nil, path: String? = nil, status: Int? = nil, grpcStatus: String? = nil) {
            self.method = method
            self.path = path
            self.status = status
            self.grpcStatus = grpcStatus
        }
    }

    /// When the request arrived.
    public let time: AuditRecord.Time
    private let start = ContinuousClock.now
    private let fields: Mutex<Fields>
    private let action = ActionNote()

    /// A note of a request arriving now, with what the face knows of it already.
    public init(_ fields: Fields = Fields()) {
        self.time = AuditRecord.now()
        self.fields = Mutex(fields)
    }

    /// Runs `operation`, the answering of one request, with this note as the one its
    /// face fills, and its action note as the one the pipeline fills.
    public func noting<T>(_ operation: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(self) { try await action.noting(operation) }
    }

    /// Changes what is noted.
    public func update(_ change: (inout Fields) -> Void) {
        fields.withLock { change(&$0) }
    }

    /// The request's line, now that `answer` was given: `route` names the request when
    /// no declared route did (the health check, a path no route takes).
    public func record(api: String, route: String, _ answer: Answer) -> AuditRecord {
        var noted = fields.withLock { $0 }
        if let kind = action.kind {
            noted.action = kind
            noted.refused = action.refused
        }
        return AuditRecord(api: api, route: route, noted, answer, time: time, elapsed: ContinuousClock.now - start)
    }
}

extension AuditRecord {
    /// When a request arrived, in seconds and nanoseconds since 1970 (UTC).
    public typealias Time = (seconds: Int, nanoseconds: Int)

    /// The line of a request of `api` (`rest`, `etcd`), from what its face noted and its
    /// transport answered: the one place a line's fields are decided, for every face.
    /// `route` names the request when `fields` names no declared route. A request the
    /// gate refused says so (`permissionDenied`) on every face, whatever its transport
    /// made of the refusal.
    public init(api: String, route: String, _ fields: AuditNote.Fields, _ answer: AuditNote.Answer, time: Time, elapsed: Duration) {
        self.init(api: api, route: fields.route ?? route, time: time, elapsed: elapsed)
        principal = fields.principal
        user = fields.user
        method = answer.method
        action = fields.action?.rawValue
        path = answer.path
        config = fields.config
        key = fields.key
        prefix = fields.prefix
        rangeEnd = fields.rangeEnd
        transaction = fields.transaction
        status = answer.status
        grpcStatus = answer.grpcStatus
        error = (fields.error ?? (fields.refused ? .permissionDenied : nil))?.rawValue
        revision = fields.revision.map { Int64(clamping: $0.rawValue) }
    }
}
