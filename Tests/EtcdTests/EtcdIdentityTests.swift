import DiscfgCore
@testable import DiscfgEtcd
import DiscfgNetwork
import DiscfgService
import Foundation
import GRPCCore
import Synchronization
import Testing

/// Who an etcd call runs as, in-process on the access gate with a manual clock: the
/// last token-state reading answers calls for 30 s while reads fail or hang; one token's
/// sessions never evict another's; a client certificate with a role is its connection's
/// caller when the call carries no token.
@Suite("etcd API: the token state's grace, sessions per token, certificates as callers")
struct EtcdIdentityTests {
    static func refusal(_ admission: EtcdAdmission) -> RPCError? {
        if case .refused(let error) = admission { return error }
        return nil
    }

    @Test("a token revoked through the server's own cache (as its REST API revokes) is refused on the etcd API by the next call, before any reading; one issued so is taken at once")
    func sharedCacheChanges() async throws {
        let fixture = try EtcdAccessTests.Store()
        defer { fixture.cleanUp() }
        let config = try ConfigName("etcd")
        let cache = TokenCache(store: fixture.store)
        let gate = EtcdAccessGate(.tokensRequired(fixture.store), config: config, tokens: cache)
        let writer = try await fixture.token(.write)
        await gate.read()
        let session = try gate.authenticate(name: writer.id, password: writer.text)
        guard case .caller = gate.admission(token: session.session, for: .set) else { Issue.record("a write token's session was refused a put"); return }
        // Neither change is read from the store: the gate answers from the cache's reading.
        cache.revoked(id: writer.id)
        #expect(Self.refusal(gate.admission(token: session.session, for: .set)) == EtcdAuthError.invalidToken)
        #expect(gate.recheck(session) == EtcdAuthError.invalidToken, "its open streams end too")
        let text = "dcfg_ba9876543210_\(String(repeating: "t", count: 43))"
        cache.issued(AccessToken(id: "ba9876543210", hash: EtcdAccessGate.hash(text), role: .read, scopes: nil, description: nil, createdAt: Date()))
        let reader = try gate.authenticate(name: "ba9876543210", password: text)
        guard case .caller = gate.admission(token: reader.session, for: .range) else { Issue.record("a token issued through the cache was refused"); return }
    }

    @Test("reads failing for 10 s: calls answered with the last state, sessions kept; failing for 31 s: refused UNAVAILABLE; a hung read refuses nothing until then")
    func tokenStateGrace() async throws {
        let fixture = try EtcdAccessTests.Store()
        defer { fixture.cleanUp() }
        let tokens = UnreliableTokens(base: fixture.store)
        let notices = NoticeLines()
        let gate = EtcdAccessGate(.tokensOnceIssued(tokens), config: try ConfigName("etcd")) { notices.append($0) }
        let start = ContinuousClock.now

        // No token yet: calls are served without one, also while reads fail.
        await gate.read(at: start)
        tokens.failing(true)
        await gate.read(at: start + .seconds(10))
        guard case .anonymous = gate.admission(token: nil, for: .set, at: start + .seconds(10)) else {
            Issue.record("a failed read 10 s after a good one refused the call")
            return
        }
        #expect(notices.lines.last?.hasPrefix("the token state could not be read: the etcd API answers calls with the state read last, for at most 30 s") == true, "\(notices.lines)")
        await gate.read(at: start + .seconds(31))
        #expect(Self.refusal(gate.admission(token: nil, for: .set, at: start + .seconds(31))) == EtcdAccessGate.unknown)
        #expect(gate.recheck(nil, at: start + .seconds(31)) == EtcdAccessGate.unknown)
        #expect(notices.lines.last == "the token state could not be read: the etcd API refuses every call until it can")

        // A token: its session lives through failed reads for 30 s, then is refused.
        tokens.failing(false)
        let writer = try await fixture.token(.write)
        let later = start + .seconds(40)
        await gate.read(at: later)
        #expect(notices.lines.suffix(2) == ["tokens are required: etcd calls need a token from Auth.Authenticate, with a discfg token's id as user name and the token as password", "the token state is read again"])
        let caller = try gate.authenticate(name: writer.id, password: writer.text, at: later)
        tokens.failing(true)
        await gate.read(at: later + .seconds(10))
        guard case .caller(let admitted) = gate.admission(token: caller.session, for: .set, at: later + .seconds(10)) else {
            Issue.record("a session was refused while the last reading was 10 s old")
            return
        }
        #expect(admitted === caller)
        #expect(gate.recheck(caller, at: later + .seconds(10)) == nil)
        #expect(Self.refusal(gate.admission(token: nil, for: .range, at: later + .seconds(10))) == EtcdAuthError.userEmpty, "the last state still requires tokens")
        #expect(Self.refusal(gate.admission(token: caller.session, for: .set, at: later + .seconds(31))) == EtcdAccessGate.unknown)
        #expect(throws: EtcdAccessGate.unknown) { try gate.authenticate(name: writer.id, password: writer.text, at: later + .seconds(31)) }

        // A read that hangs (a store busy with other requests) holds no call up: the
        // last reading answers until it is 30 s old.
        tokens.failing(false)
        let fresh = later + .seconds(50)
        await gate.read(at: fresh)
        tokens.holding(true)
        let hung = Task { await gate.read(at: fresh + .seconds(1)) }
        await tokens.held()
        guard case .caller = gate.admission(token: caller.session, for: .set, at: fresh + .seconds(20)) else {
            Issue.record("a call waited on, or was refused for, a hung read")
            return
        }
        #expect(Self.refusal(gate.admission(token: caller.session, for: .set, at: fresh + .seconds(31))) == EtcdAccessGate.unknown)
        tokens.holding(false)
        await hung.value
        guard case .caller = gate.admission(token: caller.session, for: .set, at: fresh + .seconds(30)) else {
            Issue.record("the hung read's answer, once it came, was not taken")
            return
        }
    }

    @Test("one token authenticating past 64 sessions, even 10,050 times, ends only its own oldest; another token's earlier session still works")
    func sessionsPerToken() async throws {
        let fixture = try EtcdAccessTests.Store()
        defer { fixture.cleanUp() }
        let gate = EtcdAccessGate(.tokensRequired(fixture.store), config: try ConfigName("etcd"))
        let noisy = try await fixture.token(.read, id: "aaaaaaaaaaaa")
        let quiet = try await fixture.token(.write, id: "bbbbbbbbbbbb")
        let start = ContinuousClock.now
        await gate.read(at: start)
        let other = try gate.authenticate(name: quiet.id, password: quiet.text, at: start)
        let first = try gate.authenticate(name: noisy.id, password: noisy.text, at: start + .milliseconds(1))
        var last = first
        for step in 0..<(EtcdSessions.maxSessions + 50) {
            last = try gate.authenticate(name: noisy.id, password: noisy.text, at: start + .milliseconds(2) + .microseconds(step))
        }
        let now = start + .seconds(1)
        #expect(gate.state.withLock { $0.sessions.count(of: noisy.id) } == EtcdSessions.maxPerToken)
        #expect(gate.state.withLock { $0.sessions.count } == EtcdSessions.maxPerToken + 1)
        guard case .caller(let admitted) = gate.admission(token: other.session, for: .set, at: now) else {
            Issue.record("another token's session was evicted")
            return
        }
        #expect(admitted === other)
        #expect(Self.refusal(gate.admission(token: first.session, for: .range, at: now)) == EtcdAuthError.invalidToken, "the noisy token's oldest is gone")
        guard case .caller = gate.admission(token: last.session, for: .range, at: now) else {
            Issue.record("the noisy token's newest session was refused")
            return
        }

        // Within one token, the least recently used goes: a session in use stays.
        var sessions = EtcdSessions()
        let token = AccessToken(id: "cccccccccccc", hash: Data(), role: .read, createdAt: Date())
        let valid = [token.id: token]
        let kept = EtcdCaller(session: "kept", token: token)
        sessions.add(kept, at: start, valid: valid)
        let callers = (0..<EtcdSessions.maxPerToken).map { EtcdCaller(session: "s\($0)", token: token) }
        for (index, caller) in callers.enumerated() {
            sessions.add(caller, at: start + .seconds(index + 1), valid: valid)
            #expect(sessions.use("kept", at: start + .seconds(index + 1), valid: valid) === kept)
        }
        #expect(sessions.count(of: token.id) == EtcdSessions.maxPerToken)
        #expect(sessions.use("s0", at: start + .seconds(100), valid: valid) == nil, "the least recently used went")
        #expect(sessions.use("kept", at: start + .seconds(100), valid: valid) === kept)
    }

    @Test("a certificate with a role is the caller of a call without a token: its role and scopes decide, its subject is the principal; a token, when sent, decides instead")
    func certificates() async throws {
        let fixture = try EtcdAccessTests.Store()
        defer { fixture.cleanUp() }
        let config = try ConfigName("etcd")
        let deployer = CertificateSubject([("O", "acme"), ("CN", "deployer")])
        let scoped = CertificateSubject([("CN", "registry")])
        let grants = try ClientCertificateRoles(parsing: "CN=deployer=write@etcd,CN=registry=admin@etcd:etcd:/registry/")
        let admin = try await fixture.token(.admin)
        for access in [EtcdAccess.open, .tokensRequired(fixture.store)] {
            let gate = EtcdAccessGate(access, config: config, certificates: grants)
            await gate.read()
            guard case .caller(let caller) = gate.admission(token: nil, certificate: deployer, for: .set) else {
                Issue.record("a write@etcd certificate was refused a put")
                return
            }
            #expect(caller.principal == Principal(kind: .certificate, id: "CN=deployer,O=acme"))
            #expect(caller.role == .write && caller.grant.scopes == [AccessScope(config: config)] && caller.session == nil)
            #expect(Self.refusal(gate.admission(token: nil, certificate: deployer, for: .compact)) == EtcdAuthError.permissionDenied, "Compact needs admin")
            let registry = try #require(gate.caller(of: scoped)).caller
            #expect(!Gate.admits(Action(.compact, on: config), for: registry), "an etcd prefix is not the whole config")
            #expect(!Gate.admits(Action(.set, on: config, reaching: EtcdKeys.target(key: Data("/db".utf8), rangeEnd: Data())), for: registry))
            #expect(Gate.admits(Action(.set, on: config, reaching: EtcdKeys.target(key: Data("/registry/a".utf8), rangeEnd: Data())), for: registry))
            #expect(gate.recheck(caller) == nil, "a certificate's caller lasts as its connection")
            // Not listed: no credential, the rules for a call without one.
            let unlisted = gate.admission(token: nil, certificate: CertificateSubject([("CN", "stranger")]), for: .range)
            if case .open = access {
                guard case .anonymous = unlisted else { Issue.record("an open gate refused an unlisted certificate"); return }
            } else {
                #expect(Self.refusal(unlisted) == EtcdAuthError.userEmpty)
                // A token sent beside the certificate decides: here, the admin's.
                let session = try gate.authenticate(name: admin.id, password: admin.text)
                guard case .caller(let tokenCaller) = gate.admission(token: session.session, certificate: deployer, for: .compact) else {
                    Issue.record("the admin token beside a write certificate was refused Compact")
                    return
                }
                #expect(tokenCaller === session)
                #expect(Self.refusal(gate.admission(token: "nope", certificate: deployer, for: .range)) == EtcdAuthError.invalidToken)
            }
        }
    }
}

/// A SQLite store's tokens whose reads can be made to fail, or to hang until let go.
private final class UnreliableTokens: TokenStore {
    private struct State {
        var failing = false
        var holding = false
        /// Reads hanging now.
        var hanging: [CheckedContinuation<Void, Never>] = []
        /// Tests waiting for a read to hang.
        var watching: [CheckedContinuation<Void, Never>] = []
    }

    let base: any TokenStore
    private let state = Mutex(State())

    init(base: any TokenStore) { self.base = base }

    func failing(_ on: Bool) { state.withLock { $0.failing = on } }

    /// Reads from now on hang until `holding(false)`, which lets them go.
    func holding(_ on: Bool) {
        let released = state.withLock { state in
            state.holding = on
            defer { if !on { state.hanging = [] } }
            return on ? [] : state.hanging
        }
        for read in released { read.resume() }
    }

    /// Returns once a read hangs.
    func held() async {
        await withCheckedContinuation { continuation in
            let hangs = state.withLock { state in
                if state.hanging.isEmpty { state.watching.append(continuation) }
                return !state.hanging.isEmpty
            }
            if hangs { continuation.resume() }
        }
    }

    private func read() async throws {
        let (failing, holding) = state.withLock { ($0.failing, $0.holding) }
        if failing { throw DiscfgError(.unavailable, "the token table did not answer") }
        guard holding else { return }
        await withCheckedContinuation { continuation in
            let (hangs, watchers) = state.withLock { state in
                guard state.holding else { return (false, [CheckedContinuation<Void, Never>]()) }
                state.hanging.append(continuation)
                defer { state.watching = [] }
                return (true, state.watching)
            }
            for watcher in watchers { watcher.resume() }
            if !hangs { continuation.resume() }
        }
    }

    func saveToken(_ token: AccessToken) async throws { try await base.saveToken(token) }
    func token(id: String) async throws -> AccessToken? {
        try await read()
        return try await base.token(id: id)
    }
    func listTokens() async throws -> [AccessToken] {
        try await read()
        return try await base.listTokens()
    }
    func revokeToken(id: String) async throws { try await base.revokeToken(id: id) }
    func tokensWereIssued() async throws -> Bool {
        try await read()
        return try await base.tokensWereIssued()
    }
    func forgetIssuedTokens() async throws { try await base.forgetIssuedTokens() }
}

/// What the gate told the log.
private final class NoticeLines: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var lines: [String] { storage.withLock { $0 } }
}
