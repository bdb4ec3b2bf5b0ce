import DiscfgCore
import Testing

/// Webhooks go to public HTTPS hosts unless an operator says otherwise.
@Suite("Webhook targets: public HTTPS only by default")
struct WebhookPolicyTests {
    @Test("non-public addresses, in every spelling", arguments: [
        "127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "::1", "fe80::1", "fc00::1", "fd00:ec2::254", "ff02::1",
        "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "2001:db8::1", "198.18.0.1",
    ])
    func notPublic(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(!address.isPublic, "\(text)")
    }

    @Test("public addresses", arguments: ["1.1.1.1", "8.8.8.8", "172.32.0.1", "192.169.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
    func isPublic(_ text: String) throws {
        #expect(try #require(IPAddress(text)).isPublic, "\(text)")
    }

    @Test("URLs: https to a public host passes; http, loopback names and private literals need the allowances")
    func urls() throws {
        try WebhookPolicy.strict.check(url: "https://hooks.example.com/discfg")
        try WebhookPolicy.strict.check(url: "https://8.8.8.8:8443/x")
        for url in ["http://hooks.example.com/", "https://localhost/x", "https://a.localhost/", "https://127.0.0.1/", "https://[::1]:9000/",
                    "https://169.254.169.254/latest/meta-data/", "https://metadata.google.internal/", "https://10.0.0.1/", "ftp://a.example/"] {
            #expect(throws: DiscfgError.self, "\(url)") { try WebhookPolicy.strict.check(url: url) }
        }
        try WebhookPolicy(allowHTTP: true).check(url: "http://hooks.example.com/")
        #expect(throws: DiscfgError.self) { try WebhookPolicy(allowHTTP: true).check(url: "http://127.0.0.1:9/") }
        try WebhookPolicy(allowHTTP: true, allowPrivate: true).check(url: "http://127.0.0.1:9/")
        #expect(throws: DiscfgError.self) {
            try WebhookPolicy.strict.check(addresses: [IPAddress("93.184.216.34")!, IPAddress("10.0.0.5")!], of: "https://rebound.example/")
        }
    }

    @Test("DISCFG_WEBHOOK_ALLOW reads http and private, and nothing else")
    func setting() throws {
        #expect(try WebhookPolicy(allowing: nil, field: "X") == .strict)
        #expect(try WebhookPolicy(allowing: "", field: "X") == .strict)
        #expect(try WebhookPolicy(allowing: "http, private", field: "X") == WebhookPolicy(allowHTTP: true, allowPrivate: true))
        #expect(throws: DiscfgError.self) { try WebhookPolicy(allowing: "everything", field: "X") }
    }
}
