import DiscfgCore
import DiscfgNetwork
import DiscfgService
import Foundation
import GRPCCore
import Logging

/// Who answers: etcd clients read a cluster id, a member id and a raft term from every
/// response header, and some compare them between calls. They are fixed per config, so
/// every server over the same config speaks as the same one-member cluster.
struct EtcdIdentity: Sendable {
    let clusterID: UInt64
    let memberID: UInt64
    /// One term: there is no leader election to count.
    let raftTerm: UInt64 = 1

    init(config: ConfigName) {
        clusterID = Self.hash("discfg cluster " + config.rawValue)
        memberID = Self.hash("discfg member " + config.rawValue)
    }

    /// FNV-1a, 64 bits: stable across processes (Swift's Hasher is not), never 0.
    private static func hash(_ text: String) -> UInt64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x100_0000_01b3
        }
        return value == 0 ? 1 : value
    }

    func header(_ revision: Revision) -> Etcdserverpb_ResponseHeader {
        var header = Etcdserverpb_ResponseHeader()
        header.clusterID = clusterID
        header.memberID = memberID
        header.revision = revision.storageValue
        header.raftTerm = raftTerm
        return header
    }
}

extension Mvccpb_KeyValue {
    /// The etcd form of an item; nil for a key no etcd key makes.
    init?(_ item: Item) {
        guard let key = EtcdKeys.bytes(item.key.path) else { return nil }
        self.init()
        self.key = Data(key)
        value = item.value
        createRevision = item.createRevision.storageValue
        modRevision = item.modRevision.storageValue
        version = Int64(clamping: item.version)
        lease = EtcdLeases.lease(ofContentType: item.contentType)?.id ?? 0
    }
}

extension RPCError {
    /// A failure as the gRPC status etcd would answer with, after the failure policy
    /// chose what the caller sees (``EtcdCalls/status(for:)``): the policy's code,
    /// refined where etcd answers otherwise, in etcd's words.
    init(etcd error: DiscfgError) {
        let code: GRPCStatusCode = switch error.code {
        // etcd's encoding: these words are answered OUT_OF_RANGE and RESOURCE_EXHAUSTED.
        case _ where EtcdError.outOfRange.contains(error): .outOfRange
        case .tooLarge where error.field == EtcdError.answerField: .resourceExhausted
        default: FailurePolicy.grpcCode(for: error.code)
        }
        let message = if error.code == .quotaExceeded, error.field != EtcdError.leaseCapField {
            // etcd's NOSPACE: clients match these words (etcdctl, and operators' alerts).
            EtcdError.noSpace.message
        } else if error.code == .permissionDenied, error.field == "authorization" {
            // The gate's refusal, in the words etcd's clients match (ErrPermissionDenied).
            EtcdAuthError.permissionDenied.message
        } else if error.message.hasPrefix("etcdserver:") || error.message.hasPrefix("grpc:") {
            error.message
        } else {
            "etcdserver: " + error.message
        }
        self.init(code: RPCError.Code(code), message: message)
    }
}

extension RPCError.Code {
    /// The failure policy's gRPC code as grpc-swift names it.
    init(_ code: GRPCStatusCode) {
        self = switch code {
        case .cancelled: .cancelled
        case .unknown: .unknown
        case .invalidArgument: .invalidArgument
        case .notFound: .notFound
        case .alreadyExists: .alreadyExists
        case .permissionDenied: .permissionDenied
        case .resourceExhausted: .resourceExhausted
        case .failedPrecondition: .failedPrecondition
        case .outOfRange: .outOfRange
        case .internalError: .internalError
        case .unavailable: .unavailable
        case .unauthenticated: .unauthenticated
        }
    }
}

/// How the etcd API answers each call: within what deadline, and to which log the
/// details of a failure go that the caller is told only in general terms.
struct EtcdCalls: Sendable {
    /// How long a call may take (less when the client's `grpc-timeout` says so); a store
    /// that cannot answer by then (DynamoDB, retrying) fails it with `UNAVAILABLE` inside it.
    var timeout: Duration = .seconds(30)
    /// Where the failure policy writes what it does not tell the caller.
    var logger = Logger(label: "discfg.etcd")
    /// The config the etcd API serves: a scoped caller's schema refusal shows only the
    /// violations of keys it may read there.
    var config: ConfigName?

    /// The status a client is told for `error` (the policy's choice, in etcd's words);
    /// an `RPCError` raised by the transport or a refusal passes as it is. What a schema
    /// refusal shows a scoped caller was decided where the action ran
    /// (``DiscfgService/Pipeline``), as for every face.
    func status(for error: any Error) -> RPCError {
        if let error = error as? RPCError { return error }
        let error = (error as? DiscfgError).map(EtcdError.translated) ?? error
        let shown = FailurePolicy.shown(error, logger: logger)
        // The code the call's audit line names, as a REST error envelope's line does.
        AuditNote.current?.update { $0.error = shown.code }
        return RPCError(etcd: shown)
    }
}

extension EtcdBackend {
    /// The current call's deadline, computed from its transport: the earlier of the
    /// client's `grpc-timeout` (``GRPCCallHold``) and the server's request timeout.
    var deadline: Deadline {
        let server = Deadline.after(calls.timeout)
        guard let client = GRPCCallHold.current?.deadline else { return server }
        return min(client, server)
    }

    /// Runs `step` as `action` by `caller` through the one chain every face's actions go
    /// (``DiscfgService/Pipeline``), which applies the call's ``deadline`` to it, its
    /// failures answered as etcd does (``answering(_:)``).
    func perform<T: Sendable>(_ action: Action, by caller: Caller, _ step: () async throws -> T) async throws -> T {
        try await answering { try await Pipeline.perform(action, by: caller, deadline: deadline, step) }
    }

    /// Runs a handler, turning every failure into the gRPC status the failure policy
    /// gives it.
    @inline(__always)
    func answering<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw calls.status(for: error)
        }
    }

    /// Runs a handler that reads the store outside the pipeline (a call that is no
    /// action on the config: the member's status, its list; a lease looked up to learn
    /// what an action reaches) within the call's ``deadline`` as the pipeline would,
    /// its failures answered as etcd does.
    func reading<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await answering { try await Deadline.within(deadline, body) }
    }
}
