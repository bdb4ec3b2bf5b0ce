import DiscfgAPI
import DiscfgClient
import DiscfgCore
import DiscfgNetwork
import DiscfgTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

/// TLS for the REST API with a CA made by `openssl` in the test: the files a server
/// refuses, the Swift client and curl over TLS (the event loop's key reads and writes
/// too), certificates read again, a stalled handshake, and client certificates.
@Suite("TLS: serve's certificates, clients that trust a private CA, client certificates")
struct TLSTests {
    @Test("bad certificate files are refused in one sentence naming the file and what is wrong")
    func refusals() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        func refusal(_ files: ServerTLS.Files) -> DiscfgError? {
            do {
                _ = try ServerTLS(files: files)
                return nil
            } catch {
                return error as? DiscfgError
            }
        }
        let cases: [(ServerTLS.Files, field: String, words: String)] = [
            (.init(certificate: pki.path("missing.pem"), key: pki.path("server.key")), "certificate", "does not exist"),
            (.init(certificate: pki.path("server.pem"), key: pki.path("missing.key")), "key", "does not exist"),
            (.init(certificate: pki.path("server.key"), key: pki.path("server.key")), "certificate", "holds no PEM certificate"),
            (.init(certificate: pki.path("server.pem"), key: pki.path("server.pem")), "key", "holds no PEM private key"),
            (.init(certificate: pki.path("server.pem"), key: pki.path("stray.key")), "key", "does not match the certificate"),
            (.init(certificate: pki.path("expired.pem"), key: pki.path("expired.key")), "certificate", "expired on"),
            (.init(certificate: pki.path("server.pem"), key: pki.path("server.key"), clientCA: pki.path("missing.pem")), "clientCA", "does not exist"),
            (.init(certificate: pki.path("server.pem"), key: pki.path("server.key"), clientCA: pki.path("stray.key")), "clientCA", "holds no PEM certificate"),
        ]
        for (files, field, words) in cases {
            let error = try #require(refusal(files), "\(files) was taken")
            #expect(error.code == .invalidArgument && error.field == field, "\(error)")
            #expect(error.message.contains(words) && !error.message.contains("\n"), "\(error.message)")
        }
        let tls = try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key")))
        #expect(tls.loaded.serial == TestCertificates.serverSerial)
        #expect(tls.loaded.subject == "CN=localhost,O=discfg tests")
    }

    @Test("reload takes a valid new pair and keeps the old one when the new files are not")
    func reload() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let files = ServerTLS.Files(certificate: pki.path("live.pem"), key: pki.path("live.key"))
        try Self.copy(pki, "server", to: "live")
        let tls = try ServerTLS(files: files)
        try FileManager.default.removeItem(atPath: files.key)
        try FileManager.default.copyItem(atPath: pki.path("stray.key"), toPath: files.key)
        #expect(throws: DiscfgError.self) { try tls.reload() }
        #expect(tls.loaded.serial == TestCertificates.serverSerial, "a mismatched pair replaced the one served")
        try Self.copy(pki, "renewed", to: "live")
        #expect(try tls.reload().serial == TestCertificates.renewedSerial)
        #expect(tls.loaded.serial == TestCertificates.renewedSerial)
    }

    @Test("the Swift client and curl reach serve over TLS with the CA, key reads and writes on the event loop included; without it they are refused")
    func serveOverTLS() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let tls = try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key")))
        try await withServer(try await LiveServer.start { $0.tls = tls }) { server in
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)"))
            let store = try RemoteStore(url: url, token: nil, tls: ClientTLS(caCertificate: pki.path("ca.pem")))
            let demo = try ConfigName("demo")
            _ = try await store.createConfig(demo, settings: ConfigSettings())
            for round in 1...3 {
                let event = try await store.set(try Key("/db/host"), to: Data("db\(round)".utf8), in: demo)
                #expect(event.item?.version == UInt64(round))
                #expect(try await store.get(try Key("/db/host"), in: demo).map { String(decoding: $0.value, as: UTF8.self) } == "db\(round)")
            }
            let client = try ConfigClient(url: URL(string: "https://localhost:\(server.port)")!, tls: ClientTLS(caCertificate: pki.path("ca.pem")))
            #expect(try await client.config("demo").string("/db/host") == "db3")

            let untrusting = try RemoteStore(url: url, token: nil)
            await #expect(throws: DiscfgError.self) { try await untrusting.get(try Key("/db/host"), in: demo) }

            let keyURL = "https://127.0.0.1:\(server.port)/v1/demo/keys/db/host?raw"
            let curl = try await Self.curl(["--cacert", pki.path("ca.pem"), keyURL])
            #expect(curl.status == 0 && curl.stdout == "db3", "\(curl.stderr)")
            #expect(try await Self.curl([keyURL]).status == 60, "curl trusted a certificate of a CA it was not given")
            let old = try await Self.curl(["--cacert", pki.path("ca.pem"), "--tls-max", "1.1", keyURL])
            #expect(old.status != 0, "TLS 1.1 was served")
            let plain = try await Self.curl(["http://127.0.0.1:\(server.port)/v1/demo/keys/db/host?raw"])
            #expect(plain.stdout != "db3", "the TLS port answered plain HTTP")
        }
    }

    @Test("a connection that stalls in its handshake is closed, and holds a slot of the connection cap until then")
    func stalledHandshake() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        // Long enough that a loaded machine sees the slot held before the server gives up on
        // the handshake and frees it.
        let tls = try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key")), handshakeTimeout: .seconds(20))
        let started = try await LiveServer.start {
            $0.tls = tls
            $0.maxConnections = 1
        }
        try await withServer(started) { server in
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)"))
            let store = try RemoteStore(url: url, token: nil, tls: ClientTLS(caCertificate: pki.path("ca.pem")))
            // The server takes a new connection in on one of its event loops, so a request on
            // a second connection may be counted in before the stalled one: then the stalled
            // connection is the one turned away, and the test begins again. Each try asks on a
            // connection of its own (curl), so no kept-alive connection holds the slot.
            var held: (any Channel)?
            for _ in 1...10 where held == nil {
                let stalled = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: server.port).get()
                let answer = try await Self.curl(["--cacert", pki.path("ca.pem"), "-o", "/dev/null", "-w", "%{http_code}", "\(url)/v1/configs"])
                if answer.stdout == "503" { held = stalled } else { try await stalled.close() }
            }
            let stalled = try #require(held, "a request was never turned away while a stalled connection was open")
            // The server closes it; the test waits as long as it may take on a busy machine.
            let closed = try await Self.within(.seconds(60)) { try await stalled.closeFuture.get() }
            #expect(closed, "the server kept a connection that never began its handshake")
            try await eventually("the slot is given back when the stalled connection closed", timeout: .seconds(15), interval: .milliseconds(100)) {
                (try? await store.listConfigs()) != nil
            }
        }
    }

    @Test("with a client CA: no certificate and another CA's are refused; a certificate's subject is the caller, with its role, on the router and the event loop")
    func clientCertificates() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let tls = try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key"), clientCA: pki.path("ca.pem")))
        let roles = try ClientCertificateRoles(parsing: "CN=deployer=write@demo, CN=reader=read")
        try await withServer(try await LiveServer.start(auth: .required, certificateRoles: roles) { $0.tls = tls }) { server in
            _ = try await server.store.createConfig(try ConfigName("demo"), settings: ConfigSettings())
            _ = try await server.store.createConfig(try ConfigName("other"), settings: ConfigSettings())
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)"))
            func store(_ name: String?) throws -> RemoteStore {
                try RemoteStore(url: url, token: nil, tls: ClientTLS(caCertificate: pki.path("ca.pem"), certificate: name.map { pki.path("\($0).pem") }, key: name.map { pki.path("\($0).key") }))
            }
            let demo = try ConfigName("demo"), other = try ConfigName("other"), key = try Key("/app/flag")

            for refused in [nil, "intruder"] {
                let error = await #expect(throws: DiscfgError.self) { try await store(refused).get(key, in: demo) }
                #expect(error?.code == .unavailable, "\(refused ?? "no certificate"): \(String(describing: error))")
            }

            let deployer = try store("deployer")
            #expect(try await deployer.set(key, to: Data("on".utf8), in: demo).item?.version == 1)
            let outside = await #expect(throws: DiscfgError.self) { try await deployer.set(key, to: Data("on".utf8), in: other) }
            #expect(outside?.code == .permissionDenied && outside?.message.contains("cert:CN=deployer,O=discfg tests") == true, "\(String(describing: outside))")

            let reader = try store("reader")
            for _ in 1...3 {
                #expect(try await reader.get(key, in: demo).map { String(decoding: $0.value, as: UTF8.self) } == "on")
                let write = await #expect(throws: DiscfgError.self) { try await reader.set(key, to: Data("off".utf8), in: demo) }
                #expect(write?.code == .permissionDenied && write?.message.contains("cert:CN=reader,O=discfg tests has role read") == true, "\(String(describing: write))")
            }
            #expect(try await server.store.get(key, in: demo)?.version == 1, "a read-only certificate changed the key")
        }
    }

    @Test("a certificate's principal is its subject as RFC 4514 writes it: an O of 'acme,CN=ops' cannot pass for CN=ops; a subject of two CNs is refused with 403 naming them; a plain one is unchanged")
    func subjectsThatPassForAnother() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        try await pki.clientCertificate("forger", subject: "/O=acme,CN=ops/CN=deployer", serial: "2101")
        try await pki.clientCertificate("twonames", subject: "/O=discfg tests/CN=deployer/CN=ops", serial: "2102")
        let tls = try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key"), clientCA: pki.path("ca.pem")))
        let roles = try ClientCertificateRoles(parsing: "CN=deployer=read, CN=ops=admin")
        try await withServer(try await LiveServer.start(auth: .required, certificateRoles: roles) { $0.tls = tls }) { server in
            let demo = try ConfigName("demo"), key = try Key("/app/flag")
            _ = try await server.store.createConfig(demo, settings: ConfigSettings())
            _ = try await server.store.set(key, to: Data("on".utf8), in: demo)
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)"))
            func store(_ name: String) throws -> RemoteStore {
                try RemoteStore(url: url, token: nil, tls: ClientTLS(caCertificate: pki.path("ca.pem"), certificate: pki.path("\(name).pem"), key: pki.path("\(name).key")))
            }

            // The organisation's comma is escaped: the caller is CN=deployer, with its role, and reads as such.
            let forger = try store("forger")
            #expect(try await forger.get(key, in: demo)?.version == 1)
            let write = await #expect(throws: DiscfgError.self) { try await forger.set(key, to: Data("off".utf8), in: demo) }
            #expect(write?.code == .permissionDenied && write?.message.contains(#"cert:CN=deployer,O=acme\,CN=ops has role read"#) == true, "\(String(describing: write))")
            let create = await #expect(throws: DiscfgError.self) { try await forger.createConfig(try ConfigName("mine"), settings: ConfigSettings()) }
            #expect(create?.code == .permissionDenied, "\(String(describing: create))")

            // Two common names: neither is chosen, on the router and the event loop alike.
            let ambiguous = try store("twonames")
            for _ in 1...3 {
                let read = await #expect(throws: DiscfgError.self) { try await ambiguous.get(key, in: demo) }
                #expect(read?.code == .permissionDenied && read?.message.contains("2 common names (deployer, ops)") == true, "\(String(describing: read))")
            }
            let admin = await #expect(throws: DiscfgError.self) { try await ambiguous.createConfig(try ConfigName("theirs"), settings: ConfigSettings()) }
            #expect(admin?.code == .permissionDenied && admin?.message.contains("common names") == true, "\(String(describing: admin))")

            let plain = try store("deployer")
            #expect(try await plain.get(key, in: demo)?.version == 1)
            let denied = await #expect(throws: DiscfgError.self) { try await plain.set(key, to: Data("off".utf8), in: demo) }
            #expect(denied?.message.contains("cert:CN=deployer,O=discfg tests has role read") == true, "\(String(describing: denied))")
            #expect(try await server.store.listConfigs().map(\.name) == [demo], "a certificate made a config")
            #expect(try await server.store.get(key, in: demo)?.version == 1, "a certificate changed the key")
        }
    }

    @Test("a subject's values are escaped as RFC 4514 says: , + \" \\ < > ; anywhere, # and space first, space last, NUL as \\00")
    func subjectEscaping() {
        let subject = CertificateSubject([("O", "acme,CN=ops"), ("OU", "#a+b\"c\\d<e>f;g "), ("L", " x\u{0}y"), ("CN", "deployer")])
        #expect(subject.description == ##"CN=deployer,L=\ x\00y,OU=\#a\+b\"c\\d\<e\>f\;g\ ,O=acme\,CN=ops"##)
        #expect(CertificateSubject([("O", "a#b c"), ("CN", "x")]).description == "CN=x,O=a#b c")
        #expect(CertificateSubject([("CN", "ops"), ("CN", "deployer")]).commonName == nil)
    }

    @Test("client certificate roles: CN entries, roles, scopes merged per name; bad scopes, other subjects and two roles refused")
    func roleParsing() throws {
        let roles = try ClientCertificateRoles(parsing: "CN=deployer=write@demo, cn=ops=ADMIN, CN=deployer=write@prod, CN=a=b=read@x+y")
        #expect(roles.grants["deployer"] == .init(role: .write, configs: [try ConfigName("demo"), try ConfigName("prod")]))
        #expect(roles.grants["ops"] == .init(role: .admin, configs: nil))
        #expect(roles.grants["a=b"] == .init(role: .read, configs: [try ConfigName("x"), try ConfigName("y")]))
        let scoped = try ClientCertificateRoles(parsing: "CN=deployer=write@demo:/app/+demo:etcd:/registry/,CN=deployer=write@prod")
        #expect(scoped.grants["deployer"]?.scopes?.map(\.description) == ["demo:/app/", "demo:etcd:/registry/", "prod"])
        for (text, words) in [
            ("O=acme=read", "common name"), ("CN=x", "gives no role"), ("CN=x=owner", "not read, write or admin"), ("CN=x=read@", "names no config"),
            ("CN=x=write@demo:app", "does not start with '/'"), ("CN=x=read,CN=x=write", "two roles"), ("CN=x=read@bad/name", "CN=x=read@bad/name"),
        ] {
            let error = #expect(throws: DiscfgError.self, "\(text)") { try ClientCertificateRoles(parsing: text) }
            #expect(error?.field == "tls-client-roles" && error?.message.contains(words) == true, "\(text): \(String(describing: error))")
        }
        let subject = CertificateSubject([("O", "acme"), ("CN", "deployer")])
        #expect(roles.caller(for: subject)?.name == "cert:CN=deployer,O=acme")
        #expect(roles.caller(for: subject)?.principal == Principal(kind: .certificate, id: "CN=deployer,O=acme"))
        #expect(roles.caller(for: CertificateSubject([("CN", "stranger")])) == nil)
    }

    // MARK: Helpers

    static func copy(_ pki: TestCertificates, _ name: String, to target: String) throws {
        for suffix in ["pem", "key"] {
            try? FileManager.default.removeItem(atPath: pki.path("\(target).\(suffix)"))
            try FileManager.default.copyItem(atPath: pki.path("\(name).\(suffix)"), toPath: pki.path("\(target).\(suffix)"))
        }
    }

    static func curl(_ arguments: [String]) async throws -> ChildProcess.Output {
        try await ChildProcess.run("curl", ["-sS", "--max-time", "20"] + arguments, environment: ChildProcess.environment(), timeout: .seconds(60))
    }

    /// Whether `body` finished within `limit`.
    static func within(_ limit: Duration, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await body()
                return true
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
