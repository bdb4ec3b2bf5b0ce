import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Access scopes")
struct AccessScopeTests {
    let demo = try! ConfigName("demo")

    @Test(arguments: [
        ("demo", "demo"), ("demo:/app/", "demo:/app/"), ("demo:/app", "demo:/app/"), ("demo:/a/b", "demo:/a/b/"),
        ("demo:etcd:/registry/", "demo:etcd:/registry/"), ("demo:etcd:reg", "demo:etcd:reg"), ("demo:/caf\u{65}\u{301}", "demo:/caf\u{E9}/"),
    ])
    func scopesParseAndPrintCanonically(text: String, printed: String) throws {
        let scope = try AccessScope(text)
        #expect(scope.description == printed)
        #expect(try AccessScope(scope.description) == scope, "the printed form reads back")
        let json = try JSONEncoder().encode(scope)
        #expect(try JSONDecoder().decode(AccessScope.self, from: json) == scope)
    }

    @Test(arguments: [
        ("", "empty"), ("demo:", "names no prefix"), ("demo:app", "does not start with '/'"), ("demo:/", "root prefix"),
        ("de mo:/app/", "config name"), ("demo:/a//b", "empty segment"), ("demo:/a/../b", "\"..\" segment"),
        ("demo:etcd:", "no etcd prefix"), (":/app/", "must not be empty"), ("demo:/a\u{1}", "control character"),
    ])
    func badScopesAreRefusedNamingTheProblem(text: String, problem: String) throws {
        try expectError(.invalidArgument, field: "scope", mentioning: [problem]) { try AccessScope(text) }
    }

    @Test func aDiscfgPrefixMatchesWholeSegments() throws {
        for text in ["demo:/app", "demo:/app/"] {
            let scope = try AccessScope(text)
            #expect(scope.covers(try Key("/app")))
            #expect(scope.covers(try Key("/app/db")))
            #expect(scope.covers(try Key("app/x/y")))
            #expect(!scope.covers(try Key("/apple")))
            #expect(!scope.covers(try Key("/app-x")))
            #expect(!scope.covers(try Key("/App/db")), "keys are case-sensitive")
            #expect(!scope.covers(try Key("/ap")))
            #expect(!scope.covers(try Key("/app%2Fx")), "an encoded slash is a character of one segment")
            #expect(!scope.covers(try Key("/web/app/x")))
            #expect(scope.covers(try KeyPrefix("/app/")))
            #expect(scope.covers(try KeyPrefix("/app/x")))
            #expect(!scope.covers(KeyPrefix.root))
            #expect(!scope.covers(try KeyPrefix("/ap")))
            #expect(!scope.covers(try KeyPrefix("/apple/")))
        }
        // `..` never gets a key out: keys with such segments are not keys.
        #expect(throws: DiscfgError.self) { try Key("/app/../db/password") }
        #expect(throws: DiscfgError.self) { try Key("/app//x") }
    }

    @Test func anEtcdPrefixMatchesBytesOfEtcdKeysOnly() throws {
        let scope = try AccessScope("demo:etcd:/registry/")
        let inside = Key(stored: EtcdKeyPath.path(Array("/registry/pods/a".utf8)))
        #expect(inside.path == "/.2Fregistry.2Fpods.2Fa")
        #expect(scope.covers(inside))
        #expect(scope.covers(Key(stored: EtcdKeyPath.path(Array("/registry/".utf8)))))
        #expect(!scope.covers(Key(stored: EtcdKeyPath.path(Array("/registry".utf8)))))
        #expect(!scope.covers(Key(stored: EtcdKeyPath.path(Array("/registryx/a".utf8)))))
        // Byte prefixes, as etcd's: `/reg` reaches `/registry/…`.
        let short = try AccessScope("demo:etcd:/reg")
        #expect(short.covers(inside))
        // Never a discfg key of more segments, nor one no etcd key makes.
        #expect(!scope.covers(try Key("/registry/pods/a")))
        #expect(!scope.covers(try Key("/.2Fregistry.2Fpods/a")))
        #expect(!scope.covers(Key(stored: "/.2Fregistry.2F.ZZ")))
        #expect(!scope.covers(try KeyPrefix("/.2Fregistry.2F")))
        #expect(!scope.covers(KeyPrefix.root))
    }

    @Test("an etcd prefix ending in a zero byte reaches the keys starting with it, though their paths do not start with its path")
    func anEtcdPrefixEndingInZero() throws {
        let demo = try ConfigName("demo")
        let scope = try AccessScope(config: demo, etcdPrefix: [0x61, 0])
        func key(_ bytes: [UInt8]) -> Key { Key(stored: EtcdKeyPath.path(bytes)) }
        for inside: [UInt8] in [[0x61, 0], [0x61, 0, 0], [0x61, 0, 1], [0x61, 0, 0x62], [0x61] + [UInt8](repeating: 0, count: 100)] {
            #expect(scope.covers(key(inside)), "\(inside)")
        }
        for outside: [UInt8] in [[0x61], [0x61, 1], [0x60, 0], [0x62], [0]] {
            #expect(!scope.covers(key(outside)), "\(outside)")
        }
        // `a\0` is `/a!#11`, and `a\0b` is `/a!00b`: no string prefix, one range.
        #expect(!key([0x61, 0, 0x62]).path.hasPrefix(key([0x61, 0]).path))
        #expect(scope.covers(KeyRange(lower: EtcdKeyPath.path([0x61, 0]), upper: EtcdKeyPath.path([0x61, 1])), reaching: .etcdKeys))
        #expect(scope.covers(KeyRange(lower: EtcdKeyPath.path([0x61, 0, 0]), upper: EtcdKeyPath.path([0x61, 0, 1])), reaching: .etcdKeys))
        #expect(!scope.covers(KeyRange(lower: EtcdKeyPath.path([0x61]), upper: EtcdKeyPath.path([0x61, 1])), reaching: .etcdKeys))
        // The old spelling of a trailing zero is no etcd key's, so no scope of etcd keys reaches it.
        #expect(!scope.covers(Key(stored: "/a!00")))
    }

    @Test func aDiscfgPrefixReachesNoEtcdKey() throws {
        let scope = try AccessScope("demo:/registry/")
        #expect(!scope.covers(Key(stored: EtcdKeyPath.path(Array("/registry/pods/a".utf8)))))
        #expect(!scope.covers(Key(stored: EtcdKeyPath.path(Array("/registry/".utf8)))))
        #expect(!scope.covers(EtcdKeyPath.range(prefix: "/registry/"), reaching: .etcdKeys))
        // An etcd key with no byte to escape is the discfg key of the same path.
        #expect(scope.covers(Key(stored: EtcdKeyPath.path(Array("registry".utf8)))))
    }

    @Test func etcdRangesInsideAndAcrossAPrefix() throws {
        let scope = try AccessScope("demo:etcd:/registry/")
        #expect(scope.covers(EtcdKeyPath.range(prefix: "/registry/"), reaching: .etcdKeys))
        #expect(scope.covers(EtcdKeyPath.range(prefix: "/registry/pods/"), reaching: .etcdKeys))
        #expect(!scope.covers(EtcdKeyPath.range(prefix: "/registr"), reaching: .etcdKeys))
        #expect(!scope.covers(EtcdKeyPath.range(prefix: "/"), reaching: .etcdKeys))
        #expect(!scope.covers(KeyRange.all, reaching: .etcdKeys))
        #expect(!scope.covers(KeyRange(lower: EtcdKeyPath.path(Array("/registry/a".utf8)), upper: nil), reaching: .etcdKeys))
        #expect(!scope.covers(KeyRange(lower: EtcdKeyPath.path(Array("/registry/a".utf8)), upper: EtcdKeyPath.path(Array("/registrz".utf8))), reaching: .etcdKeys))
        #expect(scope.covers(KeyRange(lower: EtcdKeyPath.path(Array("/registry/a".utf8)), upper: EtcdKeyPath.path(Array("/registry/b".utf8))), reaching: .etcdKeys))
        // A prefix of 0xFF bytes reaches every key from it on, as etcd's prefix range does.
        let top = try AccessScope(config: demo, etcdPrefix: [0x61, 0xFF])
        #expect(top.covers(KeyRange(lower: EtcdKeyPath.path([0x61, 0xFF]), upper: EtcdKeyPath.path([0x62])), reaching: .etcdKeys))
        #expect(!top.covers(KeyRange(lower: EtcdKeyPath.path([0x61, 0xFE]), upper: EtcdKeyPath.path([0x62])), reaching: .etcdKeys))
    }

    /// An etcd prefix whose first byte needs no escape (`app/`) has the escaped prefix
    /// range `[/app.2F, /app0)`, which holds every discfg key under `/app/`: such a
    /// range reaches those keys unless only etcd keys are read, so only then is it inside.
    @Test func anEtcdScopeHoldsNoRangeOfEveryKey() throws {
        for text in ["demo:etcd:app/", "demo:etcd:config/", "demo:etcd:locks/", "demo:etcd:/registry/", "demo:etcd:a"] {
            let scope = try AccessScope(text)
            guard case .etcdKeys(let bytes) = scope.reach else { Issue.record("\(text) is an etcd scope"); continue }
            let range = EtcdKeyPath.range(prefix: String(decoding: bytes, as: UTF8.self))
            #expect(scope.covers(range, reaching: .etcdKeys), "\(text): the etcd API's prefix range")
            #expect(!scope.covers(range, reaching: nil), "\(text): the same range over every key")
            let grant = AccessGrant(role: .admin, scopes: [scope])
            #expect(!grant.allows(.read, on: demo, range: range, reaching: nil))
            #expect(grant.allows(.read, on: demo, range: range, reaching: .etcdKeys))
        }
        // The range of the attack holds the discfg keys it returned.
        let attack = KeyRange(lower: "/app.2F", upper: "/app0")
        #expect(attack.contains(try Key("/app/db/password")))
        #expect(!(try AccessScope("demo:etcd:app/")).covers(attack, reaching: nil))
        // A discfg prefix scope holds ranges under its prefix whatever they reach.
        let prefix = try AccessScope("demo:/app/")
        #expect(prefix.covers(KeyRange(lower: "/app/a", upper: "/app/b"), reaching: nil))
        #expect(prefix.covers(KeyRange(lower: "/app/a", upper: "/app/b"), reaching: .etcdKeys))
        #expect(!prefix.covers(attack, reaching: nil))
    }

    /// `/.discfg/` holds schemas, which only a whole-config caller changes (through the
    /// schema routes): no prefix scope is written there, and one read from an older
    /// record reaches nothing.
    @Test(arguments: ["demo:/.discfg/", "demo:/.discfg", "demo:/.discfg/schema/", "demo:/.discfg/schema/%2Fapp%2F"])
    func scopesInsideTheReservedPrefixAreRefused(text: String) throws {
        try expectError(.invalidArgument, field: "scope", mentioning: ["/.discfg/", "schema"]) { try AccessScope(text) }
        let stored = try JSONDecoder().decode(AccessScope.self, from: JSONEncoder().encode(text))
        #expect(!stored.covers(try Key("/.discfg/schema/%2Fapp%2F")))
        #expect(!stored.covers(try Key("/.discfg")))
        #expect(!stored.covers(try KeyPrefix("/.discfg/schema/")))
        #expect(!stored.covers(KeyRange(lower: "/.discfg/", upper: "/.discfg0"), reaching: nil))
        // Names that only look alike are ordinary prefixes.
        #expect(try AccessScope("demo:/.discfgx/").covers(try Key("/.discfgx/a")))
        #expect(try AccessScope("demo:/discfg/").covers(try Key("/discfg/a")))
    }

    @Test func aGrantAnswersKeysPrefixesAndConfigs() throws {
        let prod = try ConfigName("prod")
        let grant = AccessGrant(role: .write, scopes: [try AccessScope("demo:/app/"), try AccessScope("prod")])
        #expect(grant.allows(.write, on: demo, key: try Key("/app/x")))
        #expect(!grant.allows(.admin, on: demo, key: try Key("/app/x")), "the role still bounds it")
        #expect(!grant.allows(.read, on: demo, key: try Key("/db/password")))
        #expect(grant.allows(.read, on: demo, keysUnder: try KeyPrefix("/app/")))
        #expect(!grant.allows(.read, on: demo, keysUnder: .root))
        #expect(!grant.allows(.read, on: demo), "config-level routes need the whole config")
        #expect(grant.allows(.write, on: prod))
        #expect(grant.allows(.read, on: prod, keysUnder: .root))
        let other = try ConfigName("other")
        #expect(grant.reaches(demo) && grant.reaches(prod) && !grant.reaches(other))
        #expect(grant.configs == [demo, prod])
        #expect(grant.scopeList(on: demo) == "demo:/app/")
        #expect(grant.scopeList(on: try ConfigName("other")) == "no scope on other")
        let everything = AccessGrant(role: .read, scopes: nil)
        #expect(everything.allows(.read, on: demo, keysUnder: .root) && everything.reaches(demo))
    }

    @Test func oldTokenRecordsAreWholeConfigScopes() throws {
        let token = AccessToken(id: "t", hash: Data(), role: .read, configs: [demo], createdAt: Date(timeIntervalSince1970: 0))
        #expect(token.scopes == [AccessScope(config: demo)])
        #expect(token.allows(.read, on: demo))
        // The stores' text of a list of config names is a list of scopes.
        let old = try JSONEncoder().encode([demo])
        #expect(try JSONDecoder().decode([AccessScope].self, from: old) == [AccessScope(config: demo)])
    }
}

extension EtcdKeyPath {
    /// The paths of etcd's `--prefix` range of `prefix`, as etcdctl asks for it:
    /// `[prefix, prefix with its last byte below 0xFF incremented)`.
    static func range(prefix: String) -> KeyRange {
        var end = Array(prefix.utf8)
        while let last = end.last, last == 0xFF { end.removeLast() }
        end[end.count - 1] += 1
        return KeyRange(lower: path(Array(prefix.utf8)), upper: path(end))
    }
}
