import DiscfgCore
@testable import DiscfgEtcd
import DiscfgSQLite
import Foundation
import GRPCCore
import Testing

/// A JSON Schema on the discfg key of an etcd key holds etcd's writes too: a Put (or a
/// Txn's put) that breaks it is answered FAILED_PRECONDITION naming the first violation,
/// and changes nothing. Driven through the KV service over memory and a real SQLite file.
@Suite("etcd API: schemas hold etcd's writes")
struct EtcdSchemaTests {
    typealias Backing = EtcdTestBacking

    static let schema = #"{"type": "object", "required": ["port"], "properties": {"port": {"type": "integer", "maximum": 65535}}}"#

    /// A KV service over a fresh config whose `/settings` (etcd key `settings`) holds a
    /// valid value and has a schema.
    static func service(_ backing: Backing) async throws -> (EtcdBackend, EtcdKVService, cleanUp: () -> Void) {
        let (store, backend, service, cleanUp) = try await backing.service()
        let settings = try EtcdKeys.key(Array("settings".utf8))
        #expect(settings.path == "/settings")
        _ = try await store.set(settings, to: Data(#"{"port": 8080}"#.utf8), in: backend.config)
        _ = try await store.setSchema(.key(settings), to: Data(schema.utf8), in: backend.config, force: false)
        return (backend, service, cleanUp)
    }

    static func context(_ descriptor: MethodDescriptor) -> ServerContext {
        ServerContext(descriptor: descriptor, remotePeer: "test", localPeer: "test", cancellation: ServerContext.RPCCancellationHandle())
    }

    static func put(_ value: String, key: String = "settings") -> Etcdserverpb_PutRequest {
        var request = Etcdserverpb_PutRequest()
        request.key = Data(key.utf8)
        request.value = Data(value.utf8)
        return request
    }

    /// What etcd's client sees of the put: its gRPC status code and message.
    static func refusal(_ service: EtcdKVService, _ request: Etcdserverpb_PutRequest) async throws -> RPCError? {
        do {
            _ = try await service.put(request: request, context: context(Etcdserverpb_KV.Method.Put.descriptor))
            return nil
        } catch let error as RPCError {
            return error
        }
    }

    @Test(
        "a Put that is not JSON or breaks the schema is FAILED_PRECONDITION with the first violation, and changes nothing",
        arguments: Backing.allCases, [
            ("not json", "/settings: value is not JSON, and its schema requires JSON (type)"),
            (#"{"port": 70000}"#, "/settings: /port:"),
            (#"{"port": "8080"}"#, "/settings: /port:"),
            (#"{"host": "db1"}"#, "(required)"),
            ("[]", "/settings:"),
        ]
    )
    func violatingPutIsRefused(_ backing: Backing, sent: (String, String)) async throws {
        let (value, first) = sent
        let (backend, service, cleanUp) = try await Self.service(backing)
        defer { cleanUp() }
        let before = try await backend.store.configInfo(backend.config).revision
        let error = try #require(await Self.refusal(service, Self.put(value)), "the put was applied")
        #expect(error.code == .failedPrecondition)
        #expect(error.message.hasPrefix("etcdserver: schema violation, nothing was changed: "), "\(error.message)")
        #expect(error.message.contains(first), "\(error.message)")
        #expect(try await backend.store.get(try Key("/settings"), in: backend.config)?.value == Data(#"{"port": 8080}"#.utf8))
        #expect(try await backend.store.configInfo(backend.config).revision == before)
    }

    @Test("a Put that meets the schema is written, and keys without a schema take anything", arguments: Backing.allCases)
    func validPutSucceeds(_ backing: Backing) async throws {
        let (backend, service, cleanUp) = try await Self.service(backing)
        defer { cleanUp() }
        let before = try await backend.store.configInfo(backend.config).revision
        var request = Self.put(#"{"port": 9090, "host": "db2"}"#)
        request.prevKv = true
        let response = try await service.put(request: request, context: Self.context(Etcdserverpb_KV.Method.Put.descriptor))
        #expect(response.header.revision == before.storageValue + 1)
        #expect(response.prevKv.value == Data(#"{"port": 8080}"#.utf8))
        #expect(try await backend.store.get(try Key("/settings"), in: backend.config)?.value == Data(#"{"port": 9090, "host": "db2"}"#.utf8))
        #expect(try await Self.refusal(service, Self.put("not json", key: "other")) == nil)
    }

    @Test("a Txn whose put breaks the schema is FAILED_PRECONDITION, and none of its writes happen", arguments: Backing.allCases)
    func violatingTxnIsRefused(_ backing: Backing) async throws {
        let (backend, service, cleanUp) = try await Self.service(backing)
        defer { cleanUp() }
        let before = try await backend.store.configInfo(backend.config).revision
        var other = Etcdserverpb_RequestOp()
        other.requestPut = Self.put("fine", key: "other")
        var settings = Etcdserverpb_RequestOp()
        settings.requestPut = Self.put(#"{"port": -1.5}"#)
        var txn = Etcdserverpb_TxnRequest()
        txn.success = [other, settings]
        do {
            _ = try await service.txn(request: txn, context: Self.context(Etcdserverpb_KV.Method.Txn.descriptor))
            Issue.record("the transaction was applied")
        } catch let error as RPCError {
            #expect(error.code == .failedPrecondition)
            #expect(error.message.contains("/settings: /port:"), "\(error.message)")
        }
        #expect(try await backend.store.get(try Key("/other"), in: backend.config) == nil)
        #expect(try await backend.store.configInfo(backend.config).revision == before)
    }
    @Test(
        "a Put or Txn attaching a key a prefix schema requires to a lease is FAILED_PRECONDITION naming the key, and changes nothing; a key no schema requires takes the lease",
        arguments: Backing.allCases
    )
    func leaseOnRequiredKeyIsRefused(_ backing: Backing) async throws {
        let (store, backend, service, cleanUp) = try await backing.service()
        defer { cleanUp() }
        let port = try EtcdKeys.key(Array("port".utf8))
        _ = try await store.set(port, to: Data("80".utf8), in: backend.config)
        _ = try await store.setSchema(try SchemaTarget("/"), to: Data(#"{"required": ["port"]}"#.utf8), in: backend.config, force: false)
        let lease = try await service.leases.grant(id: 0, ttl: 60)
        let before = try await store.configInfo(backend.config).revision
        var leased = Self.put("81", key: "port")
        leased.lease = lease.id
        let error = try #require(await Self.refusal(service, leased), "the put was applied")
        #expect(error.code == .failedPrecondition)
        #expect(
            error.message.hasPrefix("etcdserver: schema violation, nothing was changed: \(port.path): the schema on / requires it, and a TTL or an etcd lease would remove it"),
            "\(error.message)"
        )
        var txn = Etcdserverpb_TxnRequest()
        var operation = Etcdserverpb_RequestOp()
        operation.requestPut = leased
        txn.success = [operation]
        do {
            _ = try await service.txn(request: txn, context: Self.context(Etcdserverpb_KV.Method.Txn.descriptor))
            Issue.record("the transaction was applied")
        } catch let error as RPCError {
            #expect(error.code == .failedPrecondition && error.message.contains("the schema on / requires it"), "\(error.message)")
        }
        let kept = try await store.get(port, in: backend.config)
        #expect(kept?.value == Data("80".utf8) && kept?.contentType == nil)
        #expect(try await store.configInfo(backend.config).revision == before)
        // Without the lease the key is written; a key no schema requires takes the lease.
        #expect(try await Self.refusal(service, Self.put("81", key: "port")) == nil)
        var other = Self.put("on", key: "cache")
        other.lease = lease.id
        #expect(try await Self.refusal(service, other) == nil)
        #expect(try await store.get(try EtcdKeys.key(Array("cache".utf8)), in: backend.config).map { LeaseRecord.isAttachment($0.contentType) } == true)
    }

    @Test("a scoped caller's FAILED_PRECONDITION names only the violations of keys it may read, and counts the rest", arguments: Backing.allCases)
    func scopedCallerSeesItsOwnViolations(_ backing: Backing) async throws {
        let (store, backend, unauthenticated, cleanUp) = try await backing.service()
        defer { cleanUp() }
        // As on a server whose calls authenticate: each runs as the caller bound around it.
        var service = unauthenticated
        service.authenticates = true
        _ = try await store.set(try EtcdKeys.key(Array("admin".utf8)), to: Data(#""hunter2""#.utf8), in: backend.config)
        let schema = #"{"properties": {"app": {"type": "integer"}, "admin": {"type": "string", "minLength": 12}}}"#
        _ = try await store.setSchema(try SchemaTarget("/"), to: Data(schema.utf8), in: backend.config, force: true)
        let scope = try AccessScope(config: backend.config, etcdPrefix: Array("app".utf8))
        let token = AccessToken(id: "0123456789ab", hash: Data(), role: .write, scopes: [scope], createdAt: Date())
        let caller = EtcdCaller(session: "session", token: token)
        let scoped = try #require(await caller.bound { try await Self.refusal(service, Self.put(#""not a number""#, key: "app")) }, "the put was applied")
        #expect(scoped.code == .failedPrecondition)
        #expect(scoped.message.hasSuffix("nothing was changed: /app: must be integer, not string (type); 1 more violation outside your scopes"), "\(scoped.message)")
        #expect(!scoped.message.contains("admin") && !scoped.message.contains("12"), "\(scoped.message)")
        // A caller of the whole config sees every violation, as before.
        let whole = try #require(await Self.refusal(service, Self.put(#""not a number""#, key: "app")))
        #expect(whole.message.hasSuffix("/app: must be integer, not string (type) (and 1 more)"), "\(whole.message)")
        #expect(try await store.get(try EtcdKeys.key(Array("app".utf8)), in: backend.config) == nil)
    }

    @Test("the lease tag the etcd API writes is the one the schema check knows")
    func leaseTagIsKnownToTheCore() {
        #expect(LeaseRecord.isAttachment(EtcdLeases.tag(7, ttl: 60)))
        #expect(EtcdLeases.lease(ofContentType: "\(LeaseRecord.attachmentMediaType); id=7; ttl=60")! == (7, 60))
        #expect(!LeaseRecord.isAttachment("application/json"))
    }
}
