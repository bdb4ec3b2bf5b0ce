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
    private func perform<T: Sendable>(_ action: Action, _ step: () async throws -> T) async throws -> T {
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
        return try await perform(action(.set, key: request.key, rangeEnd: Data())) {
            guard !request.key.isEmpty else { throw EtcdError.emptyKey }
            guard !(request.ignoreLease && request.lease != 0) else { throw EtcdError.leaseProvided }
            let key = try EtcdKeys.key(request.key)
            let event: Event
            if request.ignoreValue || request.ignoreLease {
                guard !(request.ignoreValue && !request.value.isEmpty) else { throw EtcdError.valueProvided }
                event = try await putKeeping(key, value: request.ignoreValue ? nil : request.value, lease: request.ignoreLease ? nil : request.lease, by: caller)
            } else {
                let contentType = request.lease == 0 ? nil : try await leases.attachment(request.lease, by: EtcdLeaseHolder(caller, config: backend.config))
                let result = try await backend.transact(Transaction(success: [.put(key, request.value, contentType: contentType)]))
                guard let written = result.events.first else { throw DiscfgError(.internal, "a put made no change") }
                event = written
            }
            var response = Etcdserverpb_PutResponse()
            response.header = identity.header(event.revision)
            if request.prevKv, let prev = event.prevItem.flatMap({ Mvccpb_KeyValue($0) }) { response.prevKv = prev }
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

    func txn(request: Etcdserverpb_TxnRequest, context: ServerContext) async throws -> Etcdserverpb_TxnResponse {
        let caller = authenticates ? EtcdCaller.current : nil
        let limit = Limits.maxTransactionOperations
        guard request.compare.count <= limit, request.success.count <= limit, request.failure.count <= limit else {
            throw backend.calls.status(for: EtcdError.tooManyOperations)
        }
        return try await perform(Self.action(of: request, on: backend.config)) {
            var attachments: [Int64: String] = [:]
            for operation in request.success + request.failure {
                if case .requestPut(let put)? = operation.request, put.lease != 0, attachments[put.lease] == nil {
                    attachments[put.lease] = try await leases.attachment(put.lease, by: EtcdLeaseHolder(caller, config: backend.config))
                }
            }
            let past = try await pastReads(request)
            let transaction = Transaction(
                compares: try request.compare.map(Self.comparison),
                success: try request.success.filter { !Self.readsPast($0) }.map { try Self.operation($0, leases: attachments) },
                failure: try request.failure.filter { !Self.readsPast($0) }.map { try Self.operation($0, leases: attachments) }
            )
            var result = try await backend.transact(transaction)
            let branch = result.succeeded ? request.success : request.failure
            let pastOfBranch = past[result.succeeded ? 0 : 1]
            result.responses = Self.splice(pastOfBranch, into: result.responses, of: branch)
            // The reads were bounded by the store; the previous values of what the
            // branch deleted or overwrote were not, and are checked here.
            let previous = zip(branch, result.responses).flatMap { request, response -> [Event] in
                switch (request.request, response) {
                case (.requestDeleteRange(let delete)?, .delete(let events)) where delete.prevKv: events
                case (.requestPut(let put)?, .put(let event)) where put.prevKv: [event]
                default: []
                }
            }
            let read = result.responses.reduce(0) { total, response in
                guard case .get(let items) = response else { return total }
                return total + EtcdAnswer.size(items, keysOnly: false)
            }
            try Self.checkPrevious(previous, revision: result.revision, besides: read)
            var response = Etcdserverpb_TxnResponse()
            response.header = identity.header(result.revision)
            response.succeeded = result.succeeded
            response.responses = zip(branch, zip(result.responses, Self.operationRevisions(result))).enumerated().map { index, answer in
                if let read = pastOfBranch[index] { return Self.response(past: read, revision: answer.1.1) }
                return self.response(answer.0, answer.1.0, revision: answer.1.1)
            }
            return response
        }
    }

    /// Whether `operation` reads at a past revision: answered from history, read before
    /// the transaction runs (``pastReads(_:)``), not by it.
    static func readsPast(_ operation: Etcdserverpb_RequestOp) -> Bool {
        if case .requestRange(let range)? = operation.request { return range.revision > 0 }
        return false
    }

    /// The reads at past revisions of a Txn's success and failure branches, by their
    /// place in the branch, read before it runs. What a past revision holds never
    /// changes, so reading it first answers as reading it inside the transaction would
    /// (etcd's STM reads the keys of a failed commit again at the revision it began
    /// at); a revision past the config's, or compacted, refuses the Txn before anything
    /// changed. Unlike etcd, which checks only the branch that runs, the reads of both
    /// branches are checked, and they share one answer's budget.
    private func pastReads(_ request: Etcdserverpb_TxnRequest) async throws -> [[Int: EtcdBackend.RangeResult]] {
        var reads: [[Int: EtcdBackend.RangeResult]] = [[:], [:]]
        var bytes = 0
        for (side, branch) in [request.success, request.failure].enumerated() {
            for (index, operation) in branch.enumerated() where Self.readsPast(operation) {
                guard case .requestRange(let range)? = operation.request else { continue }
                let read = try await backend.range(Self.query(range))
                bytes += EtcdAnswer.size(read.items, keysOnly: false)
                guard bytes <= EtcdAnswer.maxBytes else { throw EtcdError.answerTooLarge }
                reads[side][index] = read
            }
        }
        return reads
    }

    /// The responses of the branch that ran, in its order: the store's, with each read at
    /// a past revision put back in its place.
    static func splice(_ past: [Int: EtcdBackend.RangeResult], into responses: [TransactionResponse], of branch: [Etcdserverpb_RequestOp]) -> [TransactionResponse] {
        guard !past.isEmpty else { return responses }
        var stored = responses.makeIterator()
        return branch.indices.compactMap { index in past[index].map { TransactionResponse.get($0.items) } ?? stored.next() }
    }

    /// What a Txn reaches: every key and range it compares or reads, read; every one it
    /// puts or deletes, written; those of a transaction nested in it too. Judged whole,
    /// before anything runs: never half-applied.
    static func action(of txn: Etcdserverpb_TxnRequest, on config: ConfigName) -> Action {
        var parts: [Action.Part] = []
        func add(_ txn: Etcdserverpb_TxnRequest) {
            for compare in txn.compare { parts.append(Action.Part(.read, EtcdKeys.target(key: compare.key, rangeEnd: compare.rangeEnd))) }
            for operation in txn.success + txn.failure {
                switch operation.request {
                case .requestRange(let range)?: parts.append(Action.Part(.read, EtcdKeys.target(key: range.key, rangeEnd: range.rangeEnd)))
                case .requestPut(let put)?: parts.append(Action.Part(.write, EtcdKeys.target(key: put.key, rangeEnd: Data())))
                case .requestDeleteRange(let delete)?: parts.append(Action.Part(.write, EtcdKeys.target(key: delete.key, rangeEnd: delete.rangeEnd)))
                case .requestTxn(let nested)?: add(nested)
                case nil: break
                }
            }
        }
        add(txn)
        return Action(.txn, on: config, parts: parts)
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
        case .requestTxn?:
            throw EtcdTxnShape.nested
        case nil:
            throw DiscfgError.invalid("txn", "etcdserver: a request operation names no request")
        }
    }

    /// The revision etcd reports for each operation of the branch that ran: the one the
    /// transaction began at until an operation changes a key, the transaction's own
    /// from that operation on (a read after a write sees the write).
    static func operationRevisions(_ result: TransactionResult) -> [Revision] {
        let begin = result.events.isEmpty ? result.revision : result.revision.previous
        var changed = false
        return result.responses.map { response in
            switch response {
            case .put: changed = true
            case .delete(let events): changed = changed || !events.isEmpty
            case .get: break
            }
            return changed ? result.revision : begin
        }
    }

    /// The etcd response to a read at a past revision of the branch that ran, as Range
    /// answers it, its header at `revision` as the branch's other reads'.
    static func response(past read: EtcdBackend.RangeResult, revision: Revision) -> Etcdserverpb_ResponseOp {
        var answer = Etcdserverpb_RangeResponse()
        answer.header.revision = revision.storageValue
        answer.kvs = read.items.compactMap { Mvccpb_KeyValue($0) }
        answer.more = read.more
        answer.count = Int64(read.count)
        var op = Etcdserverpb_ResponseOp()
        op.responseRange = answer
        return op
    }

    /// The etcd response to one operation of the branch that ran. Its header holds only
    /// the revision, as etcd's do; the transaction's own header says who answered.
    func response(_ request: Etcdserverpb_RequestOp, _ response: TransactionResponse, revision: Revision) -> Etcdserverpb_ResponseOp {
        var op = Etcdserverpb_ResponseOp()
        var header = Etcdserverpb_ResponseHeader()
        header.revision = revision.storageValue
        switch (request.request, response) {
        case (.requestRange(let range)?, .get(let items)):
            var answer = Etcdserverpb_RangeResponse()
            answer.header = header
            var query = Self.query(range)
            query.revision = 0
            let shaped = EtcdBackend.shaped(items.filter { EtcdKeys.bytes($0.key.path) != nil }, query)
            answer.kvs = shaped.items.compactMap { Mvccpb_KeyValue($0) }
            answer.more = shaped.more
            answer.count = Int64(shaped.count)
            op.responseRange = answer
        case (.requestPut(let put)?, .put(let event)):
            var answer = Etcdserverpb_PutResponse()
            answer.header = header
            if put.prevKv, let prev = event.prevItem.flatMap({ Mvccpb_KeyValue($0) }) { answer.prevKv = prev }
            op.responsePut = answer
        case (.requestDeleteRange(let delete)?, .delete(let events)):
            var answer = Etcdserverpb_DeleteRangeResponse()
            answer.header = header
            answer.deleted = Int64(events.count)
            if delete.prevKv { answer.prevKvs = events.compactMap { $0.prevItem.flatMap { Mvccpb_KeyValue($0) } } }
            op.responseDeleteRange = answer
        default:
            break
        }
        return op
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
