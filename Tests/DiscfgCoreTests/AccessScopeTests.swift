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

    @Test func aDiscfgPrefixReachesNoEtcdKey() throws {
        let scope = try AccessScope("demo:/registry/")
        #expect(!scope.covers(Key(stored: EtcdKeyPath.path(Array("/registry/pods/a".utf8)))))
        #expect(!scope.covers(Key(stored: EtcdKeyPath.path(Array("/registry/".utf8)))))
        #expect(!scope.covers(EtcdKeyPath.range(prefix: "/registry/")))
        // An etcd key with no byte to escape is the discfg key of the same path.
        #expect(scope.covers(Key(stored: EtcdKeyPath.path(Array("registry".utf8)))))
    }

    @Test func etcdRangesInsideAndAcrossAPrefix() throws {
        let scope = try AccessScope("demo:etcd:/registry/")
        #expect(scope.covers(EtcdKeyPath.range(prefix: "/registry/")))
        #expect(scope.covers(EtcdKeyPath.range(prefix: "/registry/pods/")))
        #expect(!scope.covers(EtcdKeyPath.range(prefix: "/registr")))
        #expect(!scope.covers(EtcdKeyPath.range(prefix: "/")))
        #expect(!scope.covers(KeyRange.all))
        #expect(!scope.covers(KeyRange(lower: EtcdKeyPath.path(Array("/registry/a".utf8)), upper: nil)))
        #expect(!scope.covers(KeyRange(lower: EtcdKeyPath.path(Array("/registry/a".utf8)), upper: EtcdKeyPath.path(Array("/registrz".utf8)))))
        #expect(scope.covers(KeyRange(lower: EtcdKeyPath.path(Array("/registry/a".utf8)), upper: EtcdKeyPath.path(Array("/registry/b".utf8)))))
        // A prefix of 0xFF bytes reaches every key from it on, as etcd's prefix range does.
        let top = try AccessScope(config: demo, etcdPrefix: [0x61, 0xFF])
        #expect(top.covers(KeyRange(lower: EtcdKeyPath.path([0x61, 0xFF]), upper: EtcdKeyPath.path([0x62]))))
        #expect(!top.covers(KeyRange(lower: EtcdKeyPath.path([0x61, 0xFE]), upper: EtcdKeyPath.path([0x62]))))
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
