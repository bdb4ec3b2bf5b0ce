import DiscfgCore
@testable import DiscfgEtcd
import DiscfgSQLite
import DiscfgService
import Foundation
import GRPCCore
import Synchronization
import Testing

/// The etcd API's access rule over a real SQLite store's tokens: open until a token is
/// issued, then calls need an etcd token from `Authenticate`, bound to its discfg token;
/// closed too once the last reading of the token state is more than 30 s old: it never
/// fails open.
@Suite("etcd API: access follows the store's tokens and never fails open")
struct EtcdAccessTests {
    /// A SQLite store in a directory of its own, removed by `cleanUp`.
    struct Store {
        let directory: URL
        let path: String
        let store: SQLiteStore

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("etcd-access-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("store.db").path
            store = try SQLiteStore(path: path)
        }

        func cleanUp() { try? FileManager.default.removeItem(at: directory) }

        /// Saves a token of `role` on `configs`, or on the scopes written `scopes`, and
        /// returns its text and id.
        func token(
            _ role: Role, id: String = "0123456789ab", configs: [ConfigName]? = nil, scopes: [String]? = nil, description: String? = "deployer"
        ) async throws -> (text: String, id: String) {
            let text = "dcfg_\(id)_\(String(repeating: "s", count: 43))"
            let scopes = try scopes.map { try $0.map(AccessScope.init) } ?? configs?.map { AccessScope(config: $0) }
            try await store.saveToken(AccessToken(id: id, hash: EtcdAccessGate.hash(text), role: role, scopes: scopes, description: description, createdAt: Date()))
            return (text, id)
        }
    }

    static func refusal(_ admission: EtcdAdmission) -> RPCError? {
        if case .refused(let error) = admission { return error }
        return nil
    }

    @Test("open without tokens; refused with etcd's 'user name is empty' once one exists; UNAVAILABLE once the last reading is over 30 s old")
    func followsTokens() async throws {
        let fixture = try Store()
        defer { fixture.cleanUp() }
        let notices = NoticeLog()
        let gate = EtcdAccessGate(.tokensOnceIssued(fixture.store)) { notices.append($0) }
        #expect(Self.refusal(gate.admission(token: nil, for: .range)) == EtcdAccessGate.unknown, "nothing read yet: refused")
        await gate.read()
        guard case .anonymous = gate.admission(token: nil, for: .set) else { Issue.record("no token yet: not anonymous"); return }
        guard case .anonymous = gate.admission(token: nil, for: .range, at: .now + .seconds(3)) else { Issue.record("a reading 3 s old no longer answered"); return }
        #expect(Self.refusal(gate.admission(token: nil, for: .range, at: .now + .seconds(31))) == EtcdAccessGate.unknown, "a reading older than 30 s admits nobody")
        #expect(throws: EtcdAuthError.notEnabled) { try gate.authenticate(name: "0123456789ab", password: "dcfg_0123456789ab_x") }

        _ = try await fixture.token(.read)
        await gate.read()
        #expect(Self.refusal(gate.admission(token: nil, for: .range)) == EtcdAuthError.userEmpty)
        #expect(Self.refusal(gate.admission(token: nil, for: .range))?.code == .invalidArgument)
        #expect(gate.recheck(nil) == EtcdAuthError.userEmpty, "a stream opened before the token ends")
        #expect(notices.lines.contains("tokens are required: etcd calls need a token from Auth.Authenticate, with a discfg token's id as user name and the token as password"))

        // The store stops answering: its token tables are gone.
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", "import sqlite3; c = sqlite3.connect('\(fixture.path)'); c.execute('DROP TABLE tokens'); c.execute('DROP TABLE token_history'); c.commit()"]
        try python.run()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
        await gate.read()
        #expect(Self.refusal(gate.admission(token: nil, for: .range)) == EtcdAuthError.userEmpty, "the last reading answers for 30 s")
        #expect(Self.refusal(gate.admission(token: nil, for: .range, at: .now + .seconds(31))) == EtcdAccessGate.unknown)
        #expect(Self.refusal(gate.admission(token: nil, for: .range, at: .now + .seconds(31)))?.code == .unavailable)

        guard case .anonymous = EtcdAccessGate(.open).admission(token: "anything", for: .compact) else { Issue.record("an open gate refused"); return }
        #expect(throws: EtcdAuthError.notEnabled) { try EtcdAccessGate(.open).authenticate(name: "a", password: "b") }
    }

    @Test("Authenticate takes a token's id and the token; its etcd token admits calls by the role, ends with the discfg token, and a bad one is etcd's 'invalid auth token'")
    func sessions() async throws {
        let fixture = try Store()
        defer { fixture.cleanUp() }
        let config = try ConfigName("etcd")
        let gate = EtcdAccessGate(.tokensRequired(fixture.store), config: config)
        let reader = try await fixture.token(.read, id: "aaaaaaaaaaaa")
        let writer = try await fixture.token(.write, id: "bbbbbbbbbbbb", description: "ci")
        let elsewhere = try await fixture.token(.admin, id: "cccccccccccc", configs: [ConfigName("other")])
        await gate.read()

        // Wrong passwords, names and shapes: etcd's "authentication failed".
        for (name, password) in [
            (reader.id, writer.text), (writer.id, reader.text), ("", reader.text), (reader.id, ""), (reader.id, reader.text + "x"),
            (reader.id, String(reader.text.dropLast())), ("dddddddddddd", "dcfg_dddddddddddd_" + String(repeating: "s", count: 43)), (reader.text, reader.id),
        ] {
            #expect(throws: EtcdAuthError.authFailed, "\(name) / \(password)") { try gate.authenticate(name: name, password: password) }
        }

        let read = try gate.authenticate(name: reader.id, password: reader.text)
        #expect(read.session?.count == 32 && read.session?.allSatisfy(\.isLetter) == true)
        #expect(read.principal == Principal(kind: .token, id: reader.id, description: "deployer"))
        guard case .caller(let admitted) = gate.admission(token: read.session, for: .range) else { Issue.record("the reader's etcd token was refused a read"); return }
        #expect(admitted === read)
        #expect(Self.refusal(gate.admission(token: read.session, for: .set)) == EtcdAuthError.permissionDenied, "a read token cannot put")
        #expect(Self.refusal(gate.admission(token: read.session, for: .set))?.code == .permissionDenied)
        #expect(Self.refusal(gate.admission(token: "nope", for: .range)) == EtcdAuthError.invalidToken)
        #expect(Self.refusal(gate.admission(token: "nope", for: .range))?.code == .unauthenticated)
        guard case .anonymous = gate.admission(token: nil, for: nil) else { Issue.record("Authenticate itself needs no token"); return }

        let write = try gate.authenticate(name: writer.id, password: writer.text)
        #expect(write.session != read.session)
        guard case .caller = gate.admission(token: write.session, for: .set) else { Issue.record("the writer was refused a write"); return }
        #expect(Self.refusal(gate.admission(token: write.session, for: .compact)) == EtcdAuthError.permissionDenied, "Compact needs admin")

        // A token for another config authenticates and is refused everything else.
        let other = try gate.authenticate(name: elsewhere.id, password: elsewhere.text)
        #expect(!Gate.admits(Action(.range, on: config, reaching: EtcdKeys.target(key: Data("a".utf8), rangeEnd: Data())), for: other.caller))
        #expect(Self.refusal(gate.admission(token: other.session, for: .range)) == EtcdAuthError.permissionDenied)

        // Revoked: refused from the next reading, the stream's recheck too.
        #expect(gate.recheck(read) == nil)
        try await fixture.store.revokeToken(id: reader.id)
        await gate.read()
        #expect(Self.refusal(gate.admission(token: read.session, for: .range)) == EtcdAuthError.invalidToken)
        #expect(gate.recheck(read) == EtcdAuthError.invalidToken)
        #expect(throws: EtcdAuthError.authFailed) { try gate.authenticate(name: reader.id, password: reader.text) }
        guard case .caller = gate.admission(token: write.session, for: .set) else { Issue.record("revoking one token ended another's session"); return }

        // Unused for etcd's TTL: expired; a use keeps it alive.
        let later = ContinuousClock.now + .seconds(200)
        await gate.read()
        let session = try #require(write.session)
        let tokens = try #require(gate.current(at: .now)).tokens
        #expect(gate.state.withLock { $0.sessions.use(session, at: later, valid: tokens) } === write)
        #expect(gate.state.withLock { $0.sessions.use(session, at: later + .seconds(299), valid: tokens) } === write)
        #expect(gate.state.withLock { $0.sessions.use(session, at: later + .seconds(600), valid: tokens) } == nil)
    }

    @Test("a token reaches the etcd keys of its etcd-space scopes on the served config; a discfg-space scope, or one on another config, reaches none; a whole-config scope every key")
    func scopeSpellings() async throws {
        let fixture = try Store()
        defer { fixture.cleanUp() }
        let config = try ConfigName("etcd")
        let gate = EtcdAccessGate(.tokensRequired(fixture.store), config: config)
        let cases: [(scopes: [String]?, inside: [String], outside: [String])] = [
            (nil, ["/registry/a", "/db/password", "\0"], []),
            (["etcd"], ["/registry/a", "/db/password", "\0"], []),
            (["etcd:etcd:/registry/", "etcd"], ["/registry/a", "/db/password", "\0"], []),
            (["etcd:etcd:/registry/"], ["/registry/a"], ["/app/a", "/db/password", "\0"]),
            (["etcd:etcd:/registry/", "etcd:etcd:/app/", "other:etcd:/db/"], ["/registry/a", "/app/a"], ["/db/password", "\0"]),
        ]
        let unreached: [(scopes: [String], why: String)] = [
            (["etcd:/registry/"], "a discfg key prefix reaches no etcd key"),
            (["etcd:/app"], "not even etcd's 'app', which is discfg's /app"),
            (["other", "other:etcd:/registry/"], "another config's scopes reach none of this one"),
        ]
        var callers: [EtcdCaller] = []
        for (index, scopes) in (cases.map(\.scopes) + unreached.map { Optional($0.scopes) }).enumerated() {
            callers.append(try await Self.session(fixture, gate, id: String(repeating: "\(index)", count: 12), scopes: scopes))
        }
        await gate.read()
        /// The etcd keys named, or every key for "\0": `[\0, \0)`.
        func action(_ key: String) -> Action {
            Action(.range, on: config, reaching: EtcdKeys.target(key: Data(key.utf8), rangeEnd: key == "\0" ? Data([0]) : Data()))
        }
        for (spelled, caller) in zip(cases, callers) {
            guard case .caller = gate.admission(token: caller.session, for: .range) else {
                Issue.record("\(spelled.scopes ?? []) was refused at admission")
                continue
            }
            for key in spelled.inside {
                #expect(Gate.admits(action(key), for: caller.caller), "\(spelled.scopes ?? []) refused \(key)")
            }
            for key in spelled.outside {
                #expect(!Gate.admits(action(key), for: caller.caller), "\(spelled.scopes ?? []) admitted \(key)")
            }
        }
        for (spelled, caller) in zip(unreached, callers.dropFirst(cases.count)) {
            #expect(Self.refusal(gate.admission(token: caller.session, for: .range)) == EtcdAuthError.permissionDenied, "\(spelled.scopes): \(spelled.why)")
            #expect(Self.refusal(gate.admission(token: caller.session, for: .set)) == EtcdAuthError.permissionDenied, "\(spelled.scopes): \(spelled.why)")
        }
    }

    /// An etcd session of a new `write` token with id `id` on `scopes` (nil: every config).
    static func session(_ fixture: Store, _ gate: EtcdAccessGate, id: String, scopes: [String]?) async throws -> EtcdCaller {
        let token = try await fixture.token(.write, id: id, scopes: scopes)
        await gate.read()
        return try gate.authenticate(name: token.id, password: token.text)
    }

    @Test("scopes in etcd key space: a range is allowed only inside one scope's prefix, never narrowed; \\0 and open ends; Txn refused whole")
    func scopedRanges() throws {
        let data = { (text: String) in Data(text.utf8) }
        let config = try ConfigName("etcd")
        func caller(_ role: Role, _ scopes: [AccessScope]?) -> Caller {
            EtcdCaller(session: "s", token: AccessToken(id: "aaaaaaaaaaaa", hash: Data(), role: role, scopes: scopes, createdAt: Date())).caller
        }
        func admits(_ caller: Caller, key: Data, rangeEnd: Data) -> Bool {
            Gate.admits(Action(.range, on: config, reaching: EtcdKeys.target(key: key, rangeEnd: rangeEnd)), for: caller)
        }
        // "/app/" and "/apq" do not touch ("/app0" lies between); "/app/x/" is inside "/app/".
        let scoped = caller(.write, try ["etcd:etcd:/registry/", "etcd:etcd:/app/", "etcd:etcd:/app/x/", "etcd:etcd:/apq"].map(AccessScope.init))
        let allowed: [(String, String)] = [
            ("/registry/pods/a", ""), ("/registry/", "/registry0"), ("/registry/pods/", "/registry/pods0"), ("/app/x", "/app/y"), ("/registry/z", "/registry/a"),
        ]
        for (key, end) in allowed {
            #expect(admits(scoped, key: data(key), rangeEnd: data(end)), "[\(key), \(end)) refused")
        }
        let refused: [(String, Data)] = [
            ("/registry", Data()), ("/registry/", data("/registry1")), ("/registry/", Data([0])), ("/", data("0")), ("", Data([0])),
            ("/app/", data("/apq0")), ("/apple", Data()), ("/app", Data()), ("/regist", data("/registry/z")), ("\0", Data([0])),
        ]
        for (key, end) in refused {
            #expect(!admits(scoped, key: data(key), rangeEnd: end), "[\(key), \(end.map { $0 })) allowed")
        }
        // A prefix ending in 0xFF ends where etcd's prefix range ends; one of 0xFF alone never ends.
        let high = caller(.write, [try AccessScope(config: config, etcdPrefix: [0x61, 0xFF, 0xFF])])
        #expect(admits(high, key: Data([0x61, 0xFF, 0xFF]), rangeEnd: data("b")), "etcdctl get --prefix of a\\xFF\\xFF refused")
        #expect(!admits(high, key: Data([0x61, 0xFF, 0xFF]), rangeEnd: Data([0x62, 0])), "a range past b allowed")
        let top = caller(.write, [try AccessScope(config: config, etcdPrefix: [0xFF])])
        #expect(admits(top, key: Data([0xFF]), rangeEnd: Data([0])), "every key from \\xFF on refused")
        #expect(!admits(top, key: Data([0xFE]), rangeEnd: Data([0])), "a range from below \\xFF allowed")
        #expect(admits(caller(.write, [AccessScope(config: config)]), key: Data([0]), rangeEnd: Data([0])), "a whole-config scope reaches every key")

        var inside = Etcdserverpb_TxnRequest()
        var put = Etcdserverpb_RequestOp()
        put.requestPut.key = data("/app/a")
        inside.success = [put]
        #expect(Gate.refusal(of: EtcdKVService.action(of: inside, on: config), for: scoped) == nil)
        var outside = inside
        var stray = Etcdserverpb_RequestOp()
        stray.requestDeleteRange.key = data("/db/password")
        var nested = Etcdserverpb_RequestOp()
        nested.requestTxn.failure = [stray]
        outside.failure = [nested]
        let strayRefusal = Gate.refusal(of: EtcdKVService.action(of: outside, on: config), for: scoped)
        #expect(strayRefusal?.code == .permissionDenied && strayRefusal?.field == "authorization", "one key outside, nested in the failure branch")
        var compared = inside
        var compare = Etcdserverpb_Compare()
        compare.key = data("/")
        compare.rangeEnd = Data([0])
        compared.compare = [compare]
        #expect(Gate.refusal(of: EtcdKVService.action(of: compared, on: config), for: scoped)?.code == .permissionDenied, "a compare over every key")

        let reader = caller(.read, nil)
        #expect(Gate.refusal(of: EtcdKVService.action(of: inside, on: config), for: reader)?.code == .permissionDenied, "a read token's Txn that puts")
        var reads = Etcdserverpb_TxnRequest()
        var range = Etcdserverpb_RequestOp()
        range.requestRange.key = data("/app/a")
        reads.success = [range]
        #expect(Gate.refusal(of: EtcdKVService.action(of: reads, on: config), for: reader) == nil, "a read token's Txn that only reads")
    }
}

/// What the gate told the log.
private final class NoticeLog: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var lines: [String] { storage.withLock { $0 } }
}
