import DiscfgCore
import DiscfgService
import Foundation
import Testing

/// The one decision every face asks: what an action needs, judged against a caller.
@Suite("Gate: actions judged once, in one key space")
struct GateTests {
    let demo = try! ConfigName("demo")

    func caller(_ role: Role, _ scopes: [String]?) throws -> Caller {
        Caller(name: "token:t", role: role, scopes: try scopes?.map(AccessScope.init))
    }

    @Test("every kind declares its role and reach; open kinds need none")
    func declared() {
        for kind in Action.Kind.allCases {
            switch kind.reach {
            case .open: #expect(kind.role == nil, "\(kind)")
            case .keys, .config, .configs, .server: #expect(kind.role != nil, "\(kind)")
            }
        }
        #expect(Action.Kind.compact.reach == .config && Action.Kind.compact.role == .admin)
        #expect(Action.Kind.txn.role == .read, "a transaction's parts say whether it writes")
    }

    @Test("a transaction needs read for what it compares and reads, write for what it changes")
    func transactionParts() throws {
        let reader = try caller(.read, nil)
        let reads = Transaction(compares: [Comparison(.key(try Key("/a")), .equal, .version(1))], success: [.get(try Key("/b"))])
        #expect(Gate.admits(.txn(reads, on: demo), for: reader))
        let writes = Transaction(success: [.get(try Key("/b"))], failure: [.delete(try Key("/c"))])
        let refusal = try #require(Gate.refusal(of: .txn(writes, on: demo), for: reader))
        #expect(refusal.code == .permissionDenied && refusal.message.contains("has role read and may not change keys in config demo"))
        #expect(Action.txn(writes, on: demo).writes && !Action.txn(reads, on: demo).writes)
    }

    @Test("a prefix scope holds its keys and nothing past them, whatever the kind")
    func prefixScope() throws {
        let writer = try caller(.write, ["demo:/app/"])
        #expect(Gate.admits(Action(.set, on: demo, reaching: .key(try Key("/app/port"))), for: writer))
        #expect(Gate.admits(Action(.list, on: demo, reaching: .prefix(try KeyPrefix("/app/db/"))), for: writer))
        let outside = try #require(Gate.refusal(of: Action(.get, on: demo, reaching: .key(try Key("/db/password"))), for: writer))
        #expect(outside.message.contains("only within demo:/app/") && outside.message.contains("the key /db/password lies outside them"))
        #expect(!Gate.admits(Action(.export, on: demo, reaching: .prefix(.root)), for: writer), "an export reaches every key")
        #expect(!Gate.admits(Action(.compact, on: demo), for: writer), "compaction needs the whole config")
        #expect(Gate.admits(Action(.get, on: demo), for: writer), "before its keys are read: any part of the config lets it in")
        #expect(!Gate.admits(Action(.get, on: try ConfigName("other")), for: writer))
        // One part outside refuses the whole action.
        let mixed = Action(.txn, on: demo, parts: [Action.Part(.write, .key(try Key("/app/a"))), Action.Part(.write, .key(try Key("/b")))])
        #expect(!Gate.admits(mixed, for: writer))
    }

    @Test("an etcd prefix scope reaches etcd ranges inside it, never a range of every key")
    func etcdScope() throws {
        let writer = try caller(.write, ["demo:etcd:app/"])
        let inside = KeyRange(lower: EtcdKeyPath.path(Array("app/".utf8)), upper: EtcdKeyPath.path(Array("app0".utf8)))
        #expect(Gate.admits(Action(.range, on: demo, reaching: .range(inside, reaching: .etcdKeys)), for: writer))
        let refusal = try #require(Gate.refusal(of: Action(.txn, on: demo, parts: [Action.Part(.read, .range(inside, reaching: nil))]), for: writer))
        #expect(refusal.message.contains("not only etcd keys"), "the same range reaching discfg keys too is refused")
        #expect(!Gate.admits(Action(.get, on: demo, reaching: .key(try Key("/app/db/password"))), for: writer), "discfg keys lie outside an etcd scope")
    }

    @Test("the server's and the list's actions")
    func serverActions() throws {
        #expect(Gate.admits(Action(.tokenCreate, on: nil), for: try caller(.admin, nil)))
        let scopedAdmin = try #require(Gate.refusal(of: Action(.tokenCreate, on: nil), for: try caller(.admin, ["demo"])))
        #expect(scopedAdmin.message.contains("needs an admin of all"))
        #expect(!Gate.admits(Action(.sweep, on: nil), for: try caller(.write, nil)))
        #expect(Gate.admits(Action(.configList, on: nil), for: try caller(.read, ["demo:/app/"])))
        #expect(Gate.admits(Action(.describe, on: nil), for: .unidentified))
        #expect(!Gate.admits(Action(.get, on: demo), for: .unidentified))
    }

    @Test("the pipeline judges before the step runs, and records a change as the caller's")
    func pipeline() async throws {
        let writer = Caller(name: "token:w", role: .write, scopes: [try AccessScope("demo:/app/")], principal: Principal(kind: .token, id: "w"))
        let ran = Counter()
        await #expect(throws: DiscfgError.self) {
            try await Pipeline.perform(Action(.set, on: demo, reaching: .key(try Key("/db/x"))), by: writer, deadline: nil) { ran.add() }
        }
        #expect(ran.value == 0, "refused before the step")
        let attribution = try await Pipeline.perform(Action(.set, on: demo, reaching: .key(try Key("/app/x"))), by: writer, message: "why", deadline: nil) { Attribution.current }
        #expect(attribution?.principal.id == "w" && attribution?.message == "why")
        let read = try await Pipeline.perform(Action(.get, on: demo, reaching: .key(try Key("/app/x"))), by: writer, message: "why", deadline: nil) { Attribution.current }
        #expect(read == nil, "reads record nothing")
    }
}

/// A count a test's steps add to.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}
