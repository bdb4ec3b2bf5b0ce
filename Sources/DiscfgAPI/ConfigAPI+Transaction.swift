import DiscfgCore
import Foundation
import Hummingbird

extension ConfigAPI {
    /// `POST txn`: the body is a ``TransactionDocument``. Answers 200 whichever branch
    /// ran, with `succeeded` saying which; a malformed transaction is a 400 naming the
    /// field at fault, and nothing is changed.
    ///
    /// The body is bounded as an import's is: a transaction may carry up to 128 values
    /// of 256 KiB in each branch.
    func transaction(_ request: inout Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        let body = try await request.bodyData(limit: options.maxImportBytes)
        let transaction = try TransactionDocument.decode(body).transaction()
        // One that cannot write may be abandoned at its deadline like any read.
        let result = transaction.writes
            ? try await RequestDeadlines.commit { try await store.transact(transaction, in: config) }
            : try await store.transact(transaction, in: config)
        return APIResponse.json(Envelope(config: config, transaction: result))
    }
}
