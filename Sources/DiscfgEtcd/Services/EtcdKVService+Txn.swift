import DiscfgCore
import DiscfgService
import Foundation
import GRPCCore

/// etcd's Txn, nested transactions (`request_txn`) included: the request becomes one
/// discfg ``Transaction`` tree, which the store runs as one change (the comparisons of
/// the path taken evaluated first, against the config as it began; its operations then,
/// in one revision), and the store's answers become etcd's, a nested transaction's as a
/// `response_txn` with its own `succeeded` and responses.
///
/// An operation's *place* in the tree is the list of sides (0 success, 1 failure) and
/// indexes that lead to it: `[0, 2, 1, 0]` is the first failure operation of the
/// transaction at `success[2]`.
extension EtcdKVService {
    func txn(request: Etcdserverpb_TxnRequest, context: ServerContext) async throws -> Etcdserverpb_TxnResponse {
        let caller = authenticates ? EtcdCaller.current : nil
        let limit = Limits.maxTransactionOperations
        guard request.compare.count <= limit, request.success.count <= limit, request.failure.count <= limit else {
            throw backend.calls.status(for: EtcdError.tooManyOperations)
        }
        // Before anything walks the whole tree (the gate's reach, the conversion).
        guard Self.nestsWithinLimit(request) else { throw backend.calls.status(for: EtcdError.nestedTooDeep) }
        return try await perform(Self.action(of: request, on: backend.config)) {
            var attachments: [Int64: String] = [:]
            for put in Self.puts(in: request) where put.lease != 0 && attachments[put.lease] == nil {
                attachments[put.lease] = try await leases.attachment(put.lease, by: EtcdLeaseHolder(caller, config: backend.config))
            }
            let transaction = try Self.transaction(request, leases: attachments)
            try EtcdBackend.checkShape(transaction)
            let past = try await pastReads(request)
            var result = try await backend.transact(transaction)
            let branch = result.succeeded ? request.success : request.failure
            let side = [result.succeeded ? 0 : 1]
            result.responses = Self.splice(past, into: result.responses, of: branch, at: side)
            // The reads were bounded by the store; the previous values of what the
            // path deleted or overwrote were not, and are checked here.
            var previous: [Event] = []
            var read = 0
            Self.forEachRan(branch, result.responses) { request, response in
                switch (request.request, response) {
                case (.requestDeleteRange(let delete)?, .delete(let events)) where delete.prevKv: previous += events
                case (.requestPut(let put)?, .put(let event)) where put.prevKv: previous.append(event)
                case (_, .get(let items)): read += EtcdAnswer.size(items, keysOnly: false)
                default: break
                }
            }
            try Self.checkPrevious(previous, revision: result.revision, besides: read)
            var response = Etcdserverpb_TxnResponse()
            response.header = identity.header(result.revision)
            response.succeeded = result.succeeded
            var revisions = Self.operationRevisions(result).makeIterator()
            response.responses = responses(branch, result.responses, at: side, past: past, revisions: &revisions)
            return response
        }
    }

    /// The discfg transaction a Txn request makes, its nested transactions' too; reads
    /// at a past revision are left out (``pastReads(_:)`` answers them).
    ///
    /// - Parameter leases: the content type of each lease the puts attach keys to.
    static func transaction(_ request: Etcdserverpb_TxnRequest, leases: [Int64: String]) throws -> Transaction {
        Transaction(
            compares: try request.compare.map(comparison),
            success: try request.success.filter { !readsPast($0) }.map { try operation($0, leases: leases) },
            failure: try request.failure.filter { !readsPast($0) }.map { try operation($0, leases: leases) }
        )
    }

    /// Whether `txn` nests no deeper than ``Limits/maxTransactionDepth``, looking no
    /// deeper than that.
    static func nestsWithinLimit(_ txn: Etcdserverpb_TxnRequest, depth: Int = 1) -> Bool {
        for operation in txn.success + txn.failure {
            guard case .requestTxn(let nested)? = operation.request else { continue }
            guard depth < Limits.maxTransactionDepth, nestsWithinLimit(nested, depth: depth + 1) else { return false }
        }
        return true
    }

    /// Every put of a Txn, those of its nested transactions too.
    static func puts(in txn: Etcdserverpb_TxnRequest) -> [Etcdserverpb_PutRequest] {
        (txn.success + txn.failure).flatMap { operation -> [Etcdserverpb_PutRequest] in
            switch operation.request {
            case .requestPut(let put)?: [put]
            case .requestTxn(let nested)?: puts(in: nested)
            default: []
            }
        }
    }

    /// Whether `operation` reads at a past revision: answered from history, read before
    /// the transaction runs (``pastReads(_:)``), not by it.
    static func readsPast(_ operation: Etcdserverpb_RequestOp) -> Bool {
        if case .requestRange(let range)? = operation.request { return range.revision > 0 }
        return false
    }

    /// The reads at past revisions of every branch of a Txn and of the transactions
    /// nested in it, by their place, read before it runs. What a past revision holds
    /// never changes, so reading it first answers as reading it inside the transaction
    /// would (etcd's STM reads the keys of a failed commit again at the revision it
    /// began at); a revision past the config's, or compacted, refuses the Txn before
    /// anything changed. Unlike etcd, which checks only the path that runs, the reads of
    /// every branch are checked, and they share one answer's budget.
    private func pastReads(_ request: Etcdserverpb_TxnRequest) async throws -> [[Int]: EtcdBackend.RangeResult] {
        var reads: [[Int]: EtcdBackend.RangeResult] = [:]
        var bytes = 0
        var pending: [(txn: Etcdserverpb_TxnRequest, place: [Int])] = [(request, [])]
        while let (txn, place) = pending.popLast() {
            for (side, branch) in [txn.success, txn.failure].enumerated() {
                for (index, operation) in branch.enumerated() {
                    switch operation.request {
                    case .requestRange(let range)? where range.revision > 0:
                        let read = try await backend.range(Self.query(range))
                        bytes += EtcdAnswer.size(read.items, keysOnly: false)
                        guard bytes <= EtcdAnswer.maxBytes else { throw EtcdError.answerTooLarge }
                        reads[place + [side, index]] = read
                    case .requestTxn(let nested)?:
                        pending.append((nested, place + [side, index]))
                    default:
                        break
                    }
                }
            }
        }
        return reads
    }

    /// The responses of `branch`, a branch that ran at `place`: the store's, with each
    /// read at a past revision put back in its place, in nested transactions too.
    static func splice(
        _ past: [[Int]: EtcdBackend.RangeResult], into responses: [TransactionResponse], of branch: [Etcdserverpb_RequestOp], at place: [Int]
    ) -> [TransactionResponse] {
        guard !past.isEmpty else { return responses }
        var stored = responses.makeIterator()
        return branch.indices.compactMap { index in
            let here = place + [index]
            if let read = past[here] { return .get(read.items) }
            guard let response = stored.next() else { return nil }
            guard case .nested(let succeeded, let inner) = response, case .requestTxn(let nested)? = branch[index].request else { return response }
            let ran = succeeded ? nested.success : nested.failure
            return .nested(succeeded: succeeded, responses: splice(past, into: inner, of: ran, at: here + [succeeded ? 0 : 1]))
        }
    }

    /// Calls `body` with each operation that ran and its response, in the order they
    /// ran; a nested transaction's operations in its place.
    static func forEachRan(
        _ branch: [Etcdserverpb_RequestOp], _ responses: [TransactionResponse], _ body: (Etcdserverpb_RequestOp, TransactionResponse) -> Void
    ) {
        for (request, response) in zip(branch, responses) {
            if case .requestTxn(let nested)? = request.request, case .nested(let succeeded, let inner) = response {
                forEachRan(succeeded ? nested.success : nested.failure, inner, body)
            } else {
                body(request, response)
            }
        }
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

    /// The revision etcd reports for each operation that ran, in the order they ran
    /// (``forEachRan(_:_:_:)``): the one the transaction began at until an operation
    /// changes a key, the transaction's own from that operation on (a read after a write
    /// sees the write).
    static func operationRevisions(_ result: TransactionResult) -> [Revision] {
        let begin = result.events.isEmpty ? result.revision : result.revision.previous
        var changed = false
        var revisions: [Revision] = []
        func walk(_ responses: [TransactionResponse]) {
            for response in responses {
                switch response {
                case .put: changed = true
                case .delete(let events): changed = changed || !events.isEmpty
                case .get: break
                case .nested(_, let inner):
                    walk(inner)
                    continue
                }
                revisions.append(changed ? result.revision : begin)
            }
        }
        walk(result.responses)
        return revisions
    }

    /// The etcd responses to `branch`, a branch that ran at `place`, taking each
    /// operation's revision from `revisions` in the order they ran. A nested
    /// transaction's header is empty, as etcd's is: the outermost says who answered.
    func responses(
        _ branch: [Etcdserverpb_RequestOp], _ answers: [TransactionResponse], at place: [Int],
        past: [[Int]: EtcdBackend.RangeResult], revisions: inout IndexingIterator<[Revision]>
    ) -> [Etcdserverpb_ResponseOp] {
        var ops: [Etcdserverpb_ResponseOp] = []
        for (index, (request, answer)) in zip(branch, answers).enumerated() {
            let here = place + [index]
            if case .requestTxn(let nested)? = request.request, case .nested(let succeeded, let inner) = answer {
                var txn = Etcdserverpb_TxnResponse()
                txn.header = Etcdserverpb_ResponseHeader()
                txn.succeeded = succeeded
                txn.responses = responses(succeeded ? nested.success : nested.failure, inner, at: here + [succeeded ? 0 : 1], past: past, revisions: &revisions)
                var op = Etcdserverpb_ResponseOp()
                op.responseTxn = txn
                ops.append(op)
                continue
            }
            let revision = revisions.next() ?? Revision(0)
            if let read = past[here] {
                ops.append(Self.response(past: read, revision: revision))
            } else {
                ops.append(response(request, answer, revision: revision))
            }
        }
        return ops
    }

    /// The etcd response to a read at a past revision of a branch that ran, as Range
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

    /// The etcd response to one operation of a branch that ran. Its header holds only
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
