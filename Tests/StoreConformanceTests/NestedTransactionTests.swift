import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Nested transactions")
struct NestedTransactionTests {
    @Test(
        "every comparison of the path taken sees the config as the transaction began; its changes share one revision",
        arguments: StoreKind.with(.nestedTransactions)
    )
    func comparisonsSeeTheConfigAsItBeganAndChangesShareOneRevision(kind: StoreKind) async throws {
        try await kind.conformance.nestedTransaction.comparisonsSeeTheConfigAsItBeganAndChangesShareOneRevision()
    }

    @Test("a tree whose path only reads keeps the revision; one with no write anywhere answers the same", arguments: StoreKind.with(.nestedTransactions))
    func aTreeThatOnlyReadsKeepsTheRevision(kind: StoreKind) async throws {
        try await kind.conformance.nestedTransaction.aTreeThatOnlyReadsKeepsTheRevision()
    }

    @Test("a tree that breaks a rule anywhere (keys, depth, size, a failing operation) changes nothing", arguments: StoreKind.with(.nestedTransactions))
    func aTreeThatBreaksARuleAnywhereChangesNothing(kind: StoreKind) async throws {
        try await kind.conformance.nestedTransaction.aTreeThatBreaksARuleAnywhereChangesNothing()
    }

    @Test("the remote store refuses a nested transaction whole: the REST API's transactions do not nest")
    func theRemoteStoreRefusesNesting() async throws {
        let kind = StoreKind.remote
        #expect(!kind.capabilities.contains(.nestedTransactions))
        try await kind.conformance.withStore { store, _ in
            let config = try ConfigName("app")
            _ = try await store.createConfig(config, settings: ConfigSettings())
            _ = try await store.set(try Key("/a"), to: Data("1".utf8), in: config, options: SetOptions())
            let transaction = Transaction(success: [.put(try Key("/b"), Data("2".utf8)), .nested(Transaction(success: [.delete(try Key("/a"))]))])
            let error = try #require(await #expect(throws: DiscfgError.self) { try await store.transact(transaction, in: config) })
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("nested"), "\(error.message)")
            #expect(try await store.get(try Key("/b"), in: config) == nil)
            #expect(try await store.get(try Key("/a"), in: config) != nil)
        }
    }
}
