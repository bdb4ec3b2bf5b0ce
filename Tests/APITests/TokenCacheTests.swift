@testable import DiscfgAPI
import DiscfgCore
import DiscfgService
import Foundation
import Synchronization
import Testing

/// One reading of the store's tokens, shared by the faces of a server.
@Suite("TokenCache: one reading of the tokens for every face")
struct TokenCacheTests {
    /// A token store that counts its reads.
    final class CountingStore: TokenStore {
        let base = MemoryStore()
        let reads = Atomic<Int>(0)
        func saveToken(_ token: AccessToken) async throws { try await base.saveToken(token) }
        func token(id: String) async throws -> AccessToken? { try await base.token(id: id) }
        func listTokens() async throws -> [AccessToken] {
            reads.add(1, ordering: .relaxed)
            return try await base.listTokens()
        }
        func revokeToken(id: String) async throws { try await base.revokeToken(id: id) }
        func tokensWereIssued() async throws -> Bool { try await base.tokensWereIssued() }
        func forgetIssuedTokens() async throws { try await base.forgetIssuedTokens() }
    }

    @Test("a reading answers within its lifetime; a change made through the server drops it, and a read begun before the change is not kept")
    func lifetime() async throws {
        let store = CountingStore()
        let cache = TokenCache(store: store, lifetime: .seconds(60))
        #expect(cache.fresh() == nil)
        let empty = try await cache.current()
        #expect(empty.tokens.isEmpty && !empty.issued)
        _ = try await cache.current()
        #expect(store.reads.load(ordering: .relaxed) == 1, "the second question is answered from the reading")
        let (_, record) = try TokenFormat.generate(role: .read, configs: nil, description: nil, now: Date())
        try await store.saveToken(record)
        #expect(try await cache.current().tokens.isEmpty, "a token saved elsewhere waits for the next reading")
        cache.issued(record)
        #expect(cache.fresh() == nil, "a change made through the server drops the reading")
        #expect(cache.latest()?.tokens[record.id] != nil, "and holds at once where faces answer without the store")
        let after = try await cache.current()
        #expect(after.tokens[record.id] != nil && after.issued)
        #expect(store.reads.load(ordering: .relaxed) == 2)
        #expect(cache.fresh(at: .now + .seconds(61)) == nil, "past its lifetime the reading answers no one")
    }

    @Test("the REST authenticator answers from a reading another face made, without reading the store again")
    func shared() async throws {
        let store = CountingStore()
        let cache = TokenCache(store: store, lifetime: .seconds(60))
        let (token, record) = try TokenFormat.generate(role: .write, configs: nil, description: "shared", now: Date())
        try await store.saveToken(record)
        // As the etcd API's access gate does every half second.
        try await cache.read()
        let authenticator = Authenticator(mode: .required, tokens: cache)
        let caller = try await authenticator.identify(authorization: "Bearer \(token)", peerIsLoopback: true)
        #expect(caller.principal.id == record.id)
        #expect(store.reads.load(ordering: .relaxed) == 1, "one reading for both faces")
        // A token revoked through the REST API is gone for every face that asks the cache,
        // at once: the reading faces answer from without the store (the etcd API's) too.
        _ = try await authenticator.revokeToken(id: record.id)
        #expect(cache.latest()?.tokens[record.id] == nil)
        #expect(try await cache.current().tokens[record.id] == nil)
    }
}
