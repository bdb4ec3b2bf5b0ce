import DiscfgCore
import Foundation
import GRPCCore

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
    /// A discfg error as the gRPC status etcd would answer with.
    init(etcd error: DiscfgError) {
        let code: RPCError.Code = switch error.code {
        case _ where EtcdError.outOfRange.contains(error): .outOfRange
        case .tooLarge where error.field == EtcdError.answerField: .resourceExhausted
        case .invalidArgument, .tooLarge, .notRepresentable, .unsupportedMediaType: .invalidArgument
        case .compacted: .outOfRange
        case .keyNotFound, .configNotFound, .pathNotFound: .notFound
        case .configExists: .alreadyExists
        // A value its schema refuses: the first violation is in the message.
        case .conditionFailed, .patchFailed, .schemaViolation: .failedPrecondition
        case .unauthenticated: .unauthenticated
        case .permissionDenied: .permissionDenied
        case .throttled: .resourceExhausted
        // etcd's ErrGRPCNoSpace ("mvcc: database space exceeded") is RESOURCE_EXHAUSTED.
        case .quotaExceeded: .resourceExhausted
        case .unavailable: .unavailable
        case .internal: .internalError
        }
        let message = if error.code == .quotaExceeded {
            // etcd's NOSPACE: clients match these words (etcdctl, and operators' alerts).
            EtcdError.noSpace.message
        } else if error.message.hasPrefix("etcdserver:") || error.message.hasPrefix("grpc:") {
            error.message
        } else {
            "etcdserver: " + error.message
        }
        self.init(code: code, message: message)
    }
}

/// Runs a handler, turning discfg errors into etcd's gRPC statuses.
func answering<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as DiscfgError {
        throw RPCError(etcd: EtcdError.translated(error))
    }
}
