import DiscfgCore
import Foundation
import GRPCCore

/// etcd's `KV` service over one discfg config: Range, Put, DeleteRange and Txn, each one
/// discfg transaction (so one revision per write, as in etcd).
struct EtcdKVService: Etcdserverpb_KV.SimpleServiceProtocol {
    let backend: EtcdBackend
    let identity: EtcdIdentity

    func range(request: Etcdserverpb_RangeRequest, context: ServerContext) async throws -> Etcdserverpb_RangeResponse {
        try await answering {
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
        try await answering {
            guard !request.key.isEmpty else { throw EtcdError.emptyKey }
            guard request.lease == 0, !request.ignoreLease else { throw EtcdError.leaseNotFound }
            let key = try EtcdKeys.key(request.key)
            let event: Event
            if request.ignoreValue {
                guard request.value.isEmpty else { throw EtcdError.valueProvided }
                event = try await putKeepingValue(key)
            } else {
                let result = try await backend.transact(Transaction(success: [.put(key, request.value)]))
                guard let written = result.events.first else { throw DiscfgError(.internal, "a put made no change") }
                event = written
            }
            var response = Etcdserverpb_PutResponse()
            response.header = identity.header(event.revision)
            if request.prevKv, let prev = event.prevItem.flatMap({ Mvccpb_KeyValue($0) }) { response.prevKv = prev }
            return response
        }
    }

    /// A put that keeps the key's value (`ignore_value`): compare-and-swap on its
    /// modRevision until no other write came between the read and the put.
    private func putKeepingValue(_ key: Key) async throws -> Event {
        while true {
            let read = try await backend.transact(Transaction(success: [.get(key)]))
            guard case .get(let items)? = read.responses.first, let current = items.first else { throw EtcdError.keyNotFound }
            let result = try await backend.transact(Transaction(
                compares: [Comparison(.key(key), .equal, .modRevision(current.modRevision))],
                success: [.put(key, current.value)]
            ))
            if result.succeeded, let event = result.events.first { return event }
        }
    }

    func deleteRange(request: Etcdserverpb_DeleteRangeRequest, context: ServerContext) async throws -> Etcdserverpb_DeleteRangeResponse {
        try await answering {
            let result = try await backend.transact(Transaction(success: [try Self.delete(key: request.key, rangeEnd: request.rangeEnd)]))
            var response = Etcdserverpb_DeleteRangeResponse()
            response.header = identity.header(result.revision)
            response.deleted = Int64(result.events.count)
            if request.prevKv { response.prevKvs = result.events.compactMap { $0.prevItem.flatMap { Mvccpb_KeyValue($0) } } }
            return response
        }
    }

    func txn(request: Etcdserverpb_TxnRequest, context: ServerContext) async throws -> Etcdserverpb_TxnResponse {
        try await answering {
            let limit = Limits.maxTransactionOperations
            guard request.compare.count <= limit, request.success.count <= limit, request.failure.count <= limit else { throw EtcdError.tooManyOperations }
            let transaction = Transaction(
                compares: try request.compare.map(Self.comparison),
                success: try request.success.map(Self.operation),
                failure: try request.failure.map(Self.operation)
            )
            let result = try await backend.transact(transaction)
            let branch = result.succeeded ? request.success : request.failure
            var response = Etcdserverpb_TxnResponse()
            response.header = identity.header(result.revision)
            response.succeeded = result.succeeded
            response.responses = zip(branch, result.responses).map { self.response($0.0, $0.1, revision: result.revision) }
            return response
        }
    }

    func compact(request: Etcdserverpb_CompactionRequest, context: ServerContext) async throws -> Etcdserverpb_CompactionResponse {
        try await answering {
            let current = try await backend.currentRevision()
            guard request.revision <= current.storageValue else { throw EtcdError.futureRevision }
            throw RPCError(
                code: .unimplemented,
                message: "etcdserver: discfg keeps each config's history by its retention; set it with `discfg update \(backend.config) --history N`"
            )
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
        func revision(_ value: Int64) throws -> Revision {
            guard value >= 0 else { throw DiscfgError.invalid("compare", "etcdserver: a revision to compare with must not be negative, got \(value)") }
            return Revision(UInt64(value))
        }
        let target: Comparison.Target
        switch (compare.target, compare.targetUnion) {
        case (.version, .version(let version)?):
            guard version >= 0 else { throw DiscfgError.invalid("compare", "etcdserver: a version to compare with must not be negative, got \(version)") }
            target = .version(UInt64(version))
        case (.version, nil): target = .version(0)
        case (.create, .createRevision(let value)?): target = .createRevision(try revision(value))
        case (.create, nil): target = .createRevision(0)
        case (.mod, .modRevision(let value)?): target = .modRevision(try revision(value))
        case (.mod, nil): target = .modRevision(0)
        case (.value, .value(let value)?): target = .value(value)
        case (.value, nil): target = .value(Data())
        case (.lease, _): throw RPCError(code: .unimplemented, message: "etcdserver: comparing leases is not supported by discfg yet")
        default: throw DiscfgError.invalid("compare", "etcdserver: the compare's target and its value disagree")
        }
        return Comparison(subject, relation, target)
    }

    static func operation(_ request: Etcdserverpb_RequestOp) throws -> TransactionOperation {
        switch request.request {
        case .requestRange(let range)?:
            guard range.revision == 0 else { throw RPCError(code: .unimplemented, message: "etcdserver: a range at a past revision inside a transaction is not supported by discfg yet") }
            switch try subject(key: range.key, rangeEnd: range.rangeEnd) {
            case .key(let key): return .get(key)
            case .range(let keys): return .getRange(keys)
            case .prefix(let prefix): return .getPrefix(prefix)
            }
        case .requestPut(let put)?:
            guard !put.key.isEmpty else { throw EtcdError.emptyKey }
            guard put.lease == 0, !put.ignoreLease else { throw EtcdError.leaseNotFound }
            guard !put.ignoreValue else { throw RPCError(code: .unimplemented, message: "etcdserver: ignore_value inside a transaction is not supported by discfg yet") }
            return .put(try EtcdKeys.key(put.key), put.value)
        case .requestDeleteRange(let delete)?:
            return try Self.delete(key: delete.key, rangeEnd: delete.rangeEnd)
        case .requestTxn?:
            throw RPCError(code: .unimplemented, message: "etcdserver: nested transactions are not supported by discfg yet")
        case nil:
            throw DiscfgError.invalid("txn", "etcdserver: a request operation names no request")
        }
    }

    /// The etcd response to one operation of the branch that ran.
    func response(_ request: Etcdserverpb_RequestOp, _ response: TransactionResponse, revision: Revision) -> Etcdserverpb_ResponseOp {
        var op = Etcdserverpb_ResponseOp()
        switch (request.request, response) {
        case (.requestRange(let range)?, .get(let items)):
            var answer = Etcdserverpb_RangeResponse()
            answer.header = identity.header(revision)
            var query = Self.query(range)
            query.revision = 0
            let shaped = EtcdBackend.shaped(items.filter { EtcdKeys.bytes($0.key.path) != nil }, query)
            answer.kvs = shaped.items.compactMap { Mvccpb_KeyValue($0) }
            answer.more = shaped.more
            answer.count = Int64(shaped.count)
            op.responseRange = answer
        case (.requestPut(let put)?, .put(let event)):
            var answer = Etcdserverpb_PutResponse()
            answer.header = identity.header(revision)
            if put.prevKv, let prev = event.prevItem.flatMap({ Mvccpb_KeyValue($0) }) { answer.prevKv = prev }
            op.responsePut = answer
        case (.requestDeleteRange(let delete)?, .delete(let events)):
            var answer = Etcdserverpb_DeleteRangeResponse()
            answer.header = identity.header(revision)
            answer.deleted = Int64(events.count)
            if delete.prevKv { answer.prevKvs = events.compactMap { $0.prevItem.flatMap { Mvccpb_KeyValue($0) } } }
            op.responseDeleteRange = answer
        default:
            break
        }
        return op
    }
}

extension EtcdError {
    /// `ignore_value` with a value.
    static let valueProvided = DiscfgError(.invalidArgument, "etcdserver: value is provided", field: "value")
}
