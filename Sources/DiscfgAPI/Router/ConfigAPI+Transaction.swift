import DiscfgCore
import DiscfgService
import DiscfgNetwork
import DiscfgWire
import Foundation
import Hummingbird

extension ConfigAPI {
    /// `POST txn`: the body is a ``TransactionDocument``. Answers 200 whichever branch
    /// ran, with `succeeded` saying which; a malformed transaction is a 400 naming the
    /// field at fault, and nothing is changed.
    ///
    /// The body is bounded as an import's is: a transaction may carry up to 128 values
    /// of 256 KiB in each branch.
    ///
    /// Its reads share one page's budget (``Options/maxPageBytes``, 4 MiB of key paths
    /// and values for all its `get`s together, as a list page holds): past it the whole
    /// transaction is refused with 413 (`tooLarge`) and changes nothing, and the store
    /// stops reading there. A transaction is one atomic step, so it is answered whole or
    /// not at all, never cut short the way a list page is (etcd, too, fails an answer
    /// past its message limit rather than cutting it); a larger read is a list, page by
    /// page, at the transaction's revision.
    func transaction(_ request: inout Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let body = try await request.bodyData(limit: options.maxImportBytes)
        let document = try TransactionDocument.decode(body)
        var transaction = try document.transaction()
        // Its line names what it reaches, refused or not, as other writes name their key.
        AuditNote.current?.update { $0.transaction = AuditRecord.TransactionNames(transaction) }
        transaction.readBudget = ReadBudget(bytes: options.maxPageBytes, pastBudget: .refuse)
        let result = try await perform(.txn(transaction, on: config), message: document.message) {
            // One that cannot write may be abandoned at its deadline like any read.
            transaction.writes
                ? try await RequestDeadlines.commit { try await store.transact(transaction, in: config) }
                : try await store.transact(transaction, in: config)
        }
        return APIResponse.json(Envelope(config: config, transaction: result))
    }
}
