import DiscfgCore
import DiscfgService
import Foundation
import GRPCCore

/// etcd's `KV` service over one discfg config: Range, Put, DeleteRange and Txn, each one
/// discfg transaction (so one revision per write, as in etcd).
struct EtcdKVService: Etcdserverpb_KV.SimpleServiceProtocol {
    let backend: EtcdBackend
    let identity: EtcdIdentity
    let leases: EtcdLeases
    /// Whether calls may run as an authenticated caller (``EtcdCaller/current``); false on
    /// a server that requires no tokens, whose calls run as the anonymous client.
    var authenticates = false

    /// Runs `step` as `action` by the current call's caller, through the one chain every
    /// face's actions go (``DiscfgService/Pipeline``), its failures answered as etcd does.
    func perform<T: Sendable>(_ action: Action, _ step: () async throws -> T) async throws -> T {
        try await backend.perform(action, by: EtcdCaller.caller(authenticates: authenticates), step)
    }

    /// What a request naming `[key, rangeEnd)` does on the served config.
    private func action(_ kind: Action.Kind, key: Data, rangeEnd: Data) -> Action {
        Action(kind, on: backend.config, reaching: EtcdKeys.target(key: key, rangeEnd: rangeEnd))
    }

    func range(request: Etcdserverpb_RangeRequest, context: ServerContext) async throws -> Etcdserverpb_RangeResponse {
        try await perform(action(.range, key: request.key, rangeEnd: request.rangeEnd)) {
            let result = try await backend.range(Self.query(request))
            var response = Etcdserverpb_RangeResponse()
            response.header = identity.header(result.revision)
            response.kvs = result.items.compactMap { Mvccpb_KeyValue($0) }
            response.more = result.more
            response.count = Int64(result.count)
            return response
        }
    }

    func put(request: Etcdserverpb_PutRequest, context: ServerContext) async throws -> Etcdserverpb_PutResponse {
        let caller = authenticates ? EtcdCaller.current : nil
        // The key's path once, for the gate and the put; its refusals stay in their turn.
        let parsed = Result { try EtcdKeys.key(request.key) }
        let target = (try? parsed.get()).map(Action.Target.key) ?? EtcdKeys.target(key: request.key, rangeEnd: Data())
        return try await perform(Action(.set, on: backend.config, reaching: target)) {
            guard !request.key.isEmpty else { throw EtcdError.emptyKey }
            guard !(request.ignoreLease && request.lease != 0) else { throw EtcdError.leaseProvided }
            let key = try parsed.get()
            // The change's revision and, when asked for, the item it replaced: read from the
            // event in place, not copied out of the result whole.
            let revision: Revision
            var previous: Item?
            if request.ignoreValue || request.ignoreLease {
                guard !(request.ignoreValue && !request.value.isEmpty) else { throw EtcdError.valueProvided }
                let event = try await putKeeping(key, value: request.ignoreValue ? nil : request.value, lease: request.ignoreLease ? nil : request.lease, by: caller)
                (revision, previous) = (event.revision, event.prevItem)
            } else {
                let contentType = request.lease == 0 ? nil : try await leases.attachment(request.lease, by: EtcdLeaseHolder(caller, config: backend.config))
                let result = try await backend.transact(Transaction(success: [.put(key, request.value, contentType: contentType)]))
                guard !result.events.isEmpty else { throw DiscfgError(.internal, "a put made no change") }
                revision = result.events[0].revision
                if request.prevKv { previous = result.events[0].prevItem }
            }
            var response = Etcdserverpb_PutResponse()
            response.header = identity.header(revision)
            if request.prevKv, let prev = previous.flatMap({ Mvccpb_KeyValue($0) }) { response.prevKv = prev }
            return response
        }
    }

    /// A put that keeps the key's value (`ignore_value`, `value` nil) or its lease
    /// (`ignore_lease`, `lease` nil): compare-and-swap on its modRevision until no other
    /// write came between the read and the put.
    private func putKeeping(_ key: Key, value: Data?, lease: Int64?, by caller: EtcdCaller?) async throws -> Event {
        while true {
            let read = try await backend.transact(Transaction(success: [.get(key)]))
            guard case .get(let items)? = read.responses.first, let current = items.first else { throw EtcdError.keyNotFound }
            var contentType = current.contentType
            if let lease { contentType = lease == 0 ? nil : try await leases.attachment(lease, by: EtcdLeaseHolder(caller, config: backend.config)) }
            let result = try await backend.transact(Transaction(
                compares: [Comparison(.key(key), .equal, .modRevision(current.modRevision))],
                success: [.put(key, value ?? current.value, contentType: contentType)]
            ))
            if result.succeeded, let event = result.events.first { return event }
        }
    }

    func deleteRange(request: Etcdserverpb_DeleteRangeRequest, context: ServerContext) async throws -> Etcdserverpb_DeleteRangeResponse {
        try await perform(action(.delete, key: request.key, rangeEnd: request.rangeEnd)) {
            let result = try await backend.transact(Transaction(success: [try Self.delete(key: request.key, rangeEnd: request.rangeEnd)]))
            var response = Etcdserverpb_DeleteRangeResponse()
            response.header = identity.header(result.revision)
            response.deleted = Int64(result.events.count)
            if request.prevKv {
                try Self.checkPrevious(result.events, revision: result.revision)
                response.prevKvs = result.events.compactMap { $0.prevItem.flatMap { Mvccpb_KeyValue($0) } }
            }
            return response
        }
    }

    /// Its action (``DiscfgService/Action/Kind/compact``) reaches the whole config:
    /// compaction drops history of keys outside any scope too.
    func compact(request: Etcdserverpb_CompactionRequest, context: ServerContext) async throws -> Etcdserverpb_CompactionResponse {
        try await perform(Action(.compact, on: backend.config)) {
            let info = try await backend.compact(request.revision)
            var response = Etcdserverpb_CompactionResponse()
            response.header = identity.header(info.revision)
            return response
        }
    }

    // MARK: Translation

    static func query(_ request: Etcdserverpb_RangeRequest) -> EtcdBackend.RangeQuery {
        var query = EtcdBackend.RangeQuery(key: Array(request.key), rangeEnd: Array(request.rangeEnd))
        query.limit = request.limit
        query.revision = request.revision
        query.sortOrder = switch request.sortOrder {
        case .ascend: .ascend
        case .descend: .descend
        default: .none
        }
        query.sortTarget = switch request.sortTarget {
        case .version: .version
        case .create: .create
        case .mod: .mod
        case .value: .value
        default: .key
        }
        query.keysOnly = request.keysOnly
        query.countOnly = request.countOnly
        query.minModRevision = request.minModRevision
        query.maxModRevision = request.maxModRevision
        query.minCreateRevision = request.minCreateRevision
        query.maxCreateRevision = request.maxCreateRevision
        return query
    }

    static func subject(key: Data, rangeEnd: Data) throws -> Comparison.Subject {
        guard !key.isEmpty else { throw EtcdError.emptyKey }
        return rangeEnd.isEmpty ? .key(try EtcdKeys.key(key)) : .range(EtcdKeys.range(key: Array(key), rangeEnd: Array(rangeEnd)))
    }

    static func delete(key: Data, rangeEnd: Data) throws -> TransactionOperation {
        switch try subject(key: key, rangeEnd: rangeEnd) {
        case .key(let key): .delete(key)
        case .range(let range): .deleteRange(range)
        case .prefix(let prefix): .deletePrefix(prefix)
        }
    }

    static func comparison(_ compare: Etcdserverpb_Compare) throws -> Comparison {
        let subject = try subject(key: compare.key, rangeEnd: compare.rangeEnd)
        let relation: Comparison.Relation = switch compare.result {
        case .greater: .greater
        case .less: .less
        case .notEqual: .notEqual
        default: .equal
        }
        // etcd compares int64s; versions and revisions are never negative, so a negative
        // value makes the comparison constant: `>` and `!=` always hold, `=` and `<` never.
        let never = Comparison(subject, .less, .version(0))
        let always = Comparison(subject, .notEqual, .version(UInt64.max))
        func unsigned(_ value: Int64) -> UInt64? { value >= 0 ? UInt64(value) : nil }
        let target: Comparison.Target
        switch (compare.target, compare.targetUnion) {
        case (.version, .version(let version)?):
            guard let version = unsigned(version) else { return relation == .greater || relation == .notEqual ? always : never }
            target = .version(version)
        case (.version, nil): target = .version(0)
        case (.create, .createRevision(let value)?):
            guard let value = unsigned(value) else { return relation == .greater || relation == .notEqual ? always : never }
            target = .createRevision(Revision(value))
        case (.create, nil): target = .createRevision(0)
        case (.mod, .modRevision(let value)?):
            guard let value = unsigned(value) else { return relation == .greater || relation == .notEqual ? always : never }
            target = .modRevision(Revision(value))
        case (.mod, nil): target = .modRevision(0)
        case (.value, .value(let value)?): target = .value(value)
        case (.value, nil): target = .value(Data())
        case (.lease, _): throw RPCError(code: .unimplemented, message: "etcdserver: comparing leases is not supported by discfg yet")
        default: throw DiscfgError.invalid("compare", "etcdserver: the compare's target and its value disagree")
        }
        return Comparison(subject, relation, target)
    }

    /// - Parameter leases: the content type of each lease the operations attach keys to.
    static func operation(_ request: Etcdserverpb_RequestOp, leases: [Int64: String]) throws -> TransactionOperation {
        switch request.request {
        case .requestRange(let range)?:
            // A revision below 0 is now, as on Range; one above is read before the
            // transaction (``pastReads(_:)``).
            switch try subject(key: range.key, rangeEnd: range.rangeEnd) {
            case .key(let key): return .get(key)
            case .range(let keys): return .getRange(keys)
            case .prefix(let prefix): return .getPrefix(prefix)
            }
        case .requestPut(let put)?:
            guard !put.key.isEmpty else { throw EtcdError.emptyKey }
            guard !put.ignoreValue, !put.ignoreLease else {
                throw RPCError(code: .unimplemented, message: "etcdserver: ignore_value and ignore_lease inside a transaction are not supported by discfg yet")
            }
            return .put(try EtcdKeys.key(put.key), put.value, contentType: put.lease == 0 ? nil : leases[put.lease])
        case .requestDeleteRange(let delete)?:
            return try Self.delete(key: delete.key, rangeEnd: delete.rangeEnd)
        case .requestTxn(let nested)?:
            return .nested(try transaction(nested, leases: leases))
        case nil:
            throw DiscfgError.invalid("txn", "etcdserver: a request operation names no request")
        }
    }
}

extension EtcdKVService {
    /// Refuses an answer whose `prev_kv`s, with `besides` bytes already in it, would
    /// pass ``EtcdAnswer/maxBytes``. The change was made (etcd, too, fails to send such
    /// an answer after applying it); the message says so, with its revision.
    static func checkPrevious(_ events: [Event], revision: Revision, besides: Int = 0) throws {
        let bytes = events.reduce(besides) { $0 + ($1.prevItem.map { EtcdAnswer.size($0, keysOnly: false) } ?? 0) }
        guard bytes > EtcdAnswer.maxBytes else { return }
        throw RPCError(
            code: .resourceExhausted,
            message: "grpc: trying to send message larger than max: the change was made at revision \(revision), but its previous keys and values (\(bytes) bytes) are more than one answer holds (\(EtcdAnswer.maxBytes)); ask without prev_kv, or change fewer keys at once"
        )
    }
}

extension EtcdError {
    /// `ignore_lease` with a lease.
    static let leaseProvided = DiscfgError(.invalidArgument, "etcdserver: lease is provided", field: "lease")
    /// `ignore_value` with a value.
    static let valueProvided = DiscfgError(.invalidArgument, "etcdserver: value is provided", field: "value")
}
