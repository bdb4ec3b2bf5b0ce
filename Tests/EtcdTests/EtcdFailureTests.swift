import DiscfgCore
@testable import DiscfgEtcd
import DiscfgNetwork
import DiscfgService
import DiscfgTestSupport
import GRPCCore
import Testing

/// The etcd API answers failures by the one failure policy, in etcd's words.
@Suite("etcd API: failures reach clients as the failure policy says")
struct EtcdFailureTests {
    @Test("a store's failure is told in general terms with a correlation id; a caller's own in etcd's words")
    func exposure() {
        let calls = EtcdCalls()
        let dead = DiscfgError(.unavailable, "DynamoDB PutItem on table \"discfg\" in eu-west-1 failed: NetworkError (connection refused)")
        let status = calls.status(for: dead)
        #expect(status.code == .unavailable)
        #expect(status.message.hasPrefix("etcdserver: "))
        for secret in ["DynamoDB", "discfg\"", "eu-west-1", "NetworkError"] { #expect(!status.message.contains(secret), "\(status.message)") }
        #expect(status.message.contains("correlation id"))
        struct SwiftFailure: Error {}
        let foreign = calls.status(for: SwiftFailure())
        #expect(foreign.code == .internalError)
        #expect(!foreign.message.contains("SwiftFailure"))
        // etcd's own wording passes: clients match it.
        #expect(calls.status(for: EtcdError.compacted).message == EtcdError.compacted.message)
        #expect(calls.status(for: EtcdError.compacted).code == .outOfRange)
        #expect(calls.status(for: DiscfgError(.quotaExceeded, "config full", field: "quotaBytes")).message == EtcdError.noSpace.message)
        #expect(calls.status(for: EtcdError.futureRevision).code == .outOfRange)
    }

    @Test("a call's action runs through the pipeline within the call's deadline: the server's request timeout, or the client's earlier grpc-timeout")
    func deadline() async throws {
        let config = try ConfigName("etcd")
        var backend = EtcdBackend(store: MemoryStore(), config: config)
        backend.calls.timeout = .seconds(5)
        let action = Action(.range, on: config, reaching: .key(try Key("/k")))
        let seen = try await backend.perform(action, by: EtcdCaller.anonymous) { Deadline.current }
        let remaining = try #require(seen).remaining
        #expect(remaining > .seconds(4) && remaining <= .seconds(5))
        // Within a call whose client sent grpc-timeout: 2S, as the adapter holds it.
        let hold = GRPCCallHold(timeout: .seconds(2))
        let client = try await Pipeline.$cutoff.withValue(hold) { try await backend.perform(action, by: EtcdCaller.anonymous) { Deadline.current } }
        #expect(client != nil && client == hold.deadline)
        // A store read that is no action (a member's status) has the same deadline.
        let read = try await Pipeline.$cutoff.withValue(hold) { try await backend.reading { Deadline.current } }
        #expect(read == hold.deadline)
    }

    @Test("the etcd API refuses to listen off loopback without TLS, and without required tokens or client certificates, unless told to")
    func bindSafety() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let tls = try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key")))
        let mutual = try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key"), clientCA: pki.path("ca.pem")))
        #expect(throws: EtcdServer.BindRefusal(host: "0.0.0.0", reason: .plaintext)) {
            try EtcdServer.checkBindSafety(host: "0.0.0.0", tls: nil, allowsPlaintext: false, openToRemotePeers: true, requiresTokens: false)
        }
        #expect(throws: EtcdServer.BindRefusal(host: "0.0.0.0", reason: .unauthenticated)) {
            try EtcdServer.checkBindSafety(host: "0.0.0.0", tls: tls, allowsPlaintext: false, openToRemotePeers: false, requiresTokens: false)
        }
        try EtcdServer.checkBindSafety(host: "0.0.0.0", tls: mutual, allowsPlaintext: false, openToRemotePeers: false, requiresTokens: false)
        try EtcdServer.checkBindSafety(host: "0.0.0.0", tls: tls, allowsPlaintext: false, openToRemotePeers: true, requiresTokens: false)
        try EtcdServer.checkBindSafety(host: "0.0.0.0", tls: nil, allowsPlaintext: true, openToRemotePeers: true, requiresTokens: false)
        try EtcdServer.checkBindSafety(host: "::1", tls: nil, allowsPlaintext: false, openToRemotePeers: false, requiresTokens: false)
        // Tokens required: every call needs Auth.Authenticate, so TLS is enough off loopback.
        try EtcdServer.checkBindSafety(host: "0.0.0.0", tls: tls, allowsPlaintext: false, openToRemotePeers: false, requiresTokens: true)
        #expect(throws: EtcdServer.BindRefusal(host: "0.0.0.0", reason: .plaintext), "tokens would cross in clear") {
            try EtcdServer.checkBindSafety(host: "0.0.0.0", tls: nil, allowsPlaintext: false, openToRemotePeers: false, requiresTokens: true)
        }
    }
}
