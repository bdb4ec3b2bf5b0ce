import DiscfgCore
import Foundation

/// A private CA and certificates made with `openssl` (installed by `scripts/setup`) in a
/// temporary folder, for the TLS tests: a server certificate for 127.0.0.1 and
/// localhost, a renewed one with another serial, client certificates of the CA and of
/// another CA, an expired certificate, and a key that matches none of them. EC P-256
/// keys, valid two days.
///
/// ```swift
/// let pki = try await TestCertificates.make()
/// defer { pki.remove() }
/// try ServerTLS(files: .init(certificate: pki.path("server.pem"), key: pki.path("server.key")))
/// ```
public struct TestCertificates: Sendable {
    /// The folder every file is in.
    public let directory: URL

    /// Serial numbers (hex) of the server certificates.
    public static let serverSerial = "1001", renewedSerial = "1002"

    /// Where `name` is: `ca.pem`, `server.pem`/`server.key` (CN=localhost, SAN IP
    /// 127.0.0.1 and DNS localhost), `renewed.pem`/`renewed.key` (the same names, serial
    /// ``renewedSerial``), `deployer.pem`/`deployer.key` and `reader.pem`/`reader.key`
    /// (client certificates of the CA, CN=deployer and CN=reader), `other-ca.pem` and
    /// `intruder.pem`/`intruder.key` (a client certificate of another CA, CN=deployer),
    /// `expired.pem`/`expired.key` (a server certificate that expired yesterday),
    /// `stray.key` (a key of no certificate).
    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Makes every file in a new temporary folder.
    public static func make() async throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let pki = TestCertificates(directory: directory)
        try await pki.authority("ca", "discfg test CA")
        try await pki.authority("other-ca", "another CA")
        try await pki.leaf("server", "localhost", serial: serverSerial, signer: "ca", usage: "serverAuth")
        try await pki.leaf("renewed", "localhost", serial: renewedSerial, signer: "ca", usage: "serverAuth")
        try await pki.leaf("expired", "localhost", serial: "1003", signer: "ca", usage: "serverAuth", days: -1)
        try await pki.leaf("deployer", "deployer", serial: "2001", signer: "ca", usage: "clientAuth")
        try await pki.leaf("reader", "reader", serial: "2002", signer: "ca", usage: "clientAuth")
        try await pki.leaf("intruder", "deployer", serial: "3001", signer: "other-ca", usage: "clientAuth")
        try await pki.openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", pki.path("stray.key"))
        return pki
    }

    /// Makes `NAME.pem`/`NAME.key`: a client certificate of the CA whose subject is
    /// `subject`, in openssl's `-subj` form (`/O=acme,CN=ops/CN=deployer`: an
    /// organisation named `acme,CN=ops`, then a common name), for subjects that try to
    /// pass for another.
    public func clientCertificate(_ name: String, subject: String, serial: String) async throws {
        try await leaf(name, subject: subject, serial: serial, signer: "ca", usage: "clientAuth")
    }

    /// Removes the folder.
    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func authority(_ name: String, _ commonName: String) async throws {
        try await openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("\(name).key"), "-out", path("\(name).pem"),
            "-subj", "/CN=\(commonName)", "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
        )
    }

    private func leaf(_ name: String, _ commonName: String, serial: String, signer: String, usage: String, days: Int = 2) async throws {
        try await leaf(name, subject: "/O=discfg tests/CN=\(commonName)", serial: serial, signer: signer, usage: usage, days: days)
    }

    private func leaf(_ name: String, subject: String, serial: String, signer: String, usage: String, days: Int = 2) async throws {
        try await openssl(
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("\(name).key"), "-out", path("\(name).csr"),
            "-subj", subject
        )
        let extensions = """
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=\(usage)
            subjectAltName=IP:127.0.0.1,DNS:localhost
            """
        try Data(extensions.utf8).write(to: directory.appendingPathComponent("\(name).ext"))
        try await openssl(
            "x509", "-req", "-in", path("\(name).csr"), "-CA", path("\(signer).pem"), "-CAkey", path("\(signer).key"), "-set_serial", "0x\(serial)",
            "-days", "\(days)", "-extfile", path("\(name).ext"), "-out", path("\(name).pem")
        )
    }

    private func openssl(_ arguments: String...) async throws {
        let output = try await ChildProcess.run("openssl", arguments, environment: ChildProcess.environment(), timeout: .seconds(60))
        guard output.status == 0 else {
            throw DiscfgError(.internal, "openssl \(arguments.joined(separator: " ")) failed: \(output.stderr)")
        }
    }
}
