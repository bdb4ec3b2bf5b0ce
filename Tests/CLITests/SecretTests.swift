import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `set --secret` end to end: sealed by the CLI, stored and served as ciphertext by every
/// store, opened only where the key is at hand.
@Suite("CLI: secrets")
struct SecretTests {
    static let plaintext = "correct-horse-battery-staple-7f3a"

    /// The stores a secret travels through: the embedded file, DynamoDB on moto, and a
    /// live `serve` in front of a file.
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, dynamodb, remote
        var testDescription: String { rawValue }
    }

    @Test("set --secret, get, ls, history, watch and export: the value opens with the key and nowhere else", arguments: Kind.allCases)
    func roundTrip(kind: Kind) async throws {
        try await withStore(kind) { cli, evidence in
            let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
            #expect(keyFile.hasPrefix("file:///"))
            try await expectSuccess(cli.run("create", "app", "--encryption", keyFile))
            try await expectSuccess(cli.run("set", "app", "db/password", Self.plaintext, "--secret"))
            try await expectSuccess(cli.run("set", "app", "db/host", "db1.internal"))

            #expect(try await cli.run("get", "app", "db/password").stdout == Self.plaintext + "\n")
            #expect(try await cli.run("get", "app", "db/password", "--raw").stdout == Self.plaintext)

            let listed = try await cli.run("ls", "app", "-r")
            #expect(listed.stdout.contains("(secret)") && !listed.stdout.contains(Self.plaintext), "\(listed.stdout)")
            #expect(try await cli.run("ls", "app", "-r", "--reveal").stdout.contains(Self.plaintext))
            let listedJSON = try await cli.run("ls", "app", "-r", "-f", "json").envelope()
            let sealed = try #require(listedJSON.items?.first { $0.key == "/db/password" })
            #expect(sealed.contentType == "application/vnd.discfg.secret", "the envelope marks the item secret")

            try await expectSuccess(cli.run("set", "app", "db/password", "second-\(Self.plaintext)", "--secret"))
            let history = try await cli.run("history", "app", "db/password")
            #expect(!history.stdout.contains(Self.plaintext) && history.stdout.contains("(secret)"), "\(history.stdout)")
            let revealed = try await cli.run("history", "app", "db/password", "--reveal")
            #expect(revealed.stdout.contains("second-\(Self.plaintext)") && revealed.stdout.contains("\n1 "), "\(revealed.stdout)")
            #expect(try await cli.run("get", "app", "db/password", "--revision", "1").stdout == Self.plaintext + "\n", "history opens")

            let watcher = try cli.launch(["watch", "app", "/db/", "--from-revision", "1"])
            let replayed = try await watcher.waitForOutput(timeout: .seconds(60)) { (output) -> String? in
                output.stdoutLines.count >= 3 ? output.stdout : nil
            }
            await watcher.kill()
            #expect(replayed.contains("(secret)") && !replayed.contains(Self.plaintext), "\(replayed)")

            let env = try await cli.run("export", "app", "--to", "env")
            #expect(env.status == 2 && env.stderr.contains("--reveal"), "\(env.stderr)")
            #expect(try await cli.run("export", "app", "--to", "env", "--reveal").stdout.contains("DB_PASSWORD=second-\(Self.plaintext)"))
            let exported = try await cli.run("export", "app")
            #expect(exported.status == 0 && !exported.stdout.contains(Self.plaintext))

            // Rotation: new secrets use the new data key, old ones still open.
            try await expectSuccess(cli.run("key", "rotate", "app"))
            try await expectSuccess(cli.run("set", "app", "api/token", "third-\(Self.plaintext)", "--secret"))
            #expect(try await cli.run("get", "app", "api/token").stdout == "third-\(Self.plaintext)\n")
            #expect(try await cli.run("get", "app", "db/password").stdout == "second-\(Self.plaintext)\n")
            #expect(try await cli.run("info", "app").stdout.contains("(data key b2; 2 kept)"), "a config made now names its data keys b1, b2, … (DataKeyIDs)")
            let sealedBefore = try await cli.run("ls", "app", "-r", "-f", "json").envelope().items
            let resealed = try await cli.run("key", "rotate", "app", "--reseal")
            #expect(resealed.status == 0 && resealed.stdout.contains("sealed 2 secrets again"), "\(resealed.stdout)\(resealed.stderr)")
            let sealedAfter = try await cli.run("ls", "app", "-r", "-f", "json").envelope().items
            #expect(sealedAfter?.first { $0.key == "/db/host" }?.value == "db1.internal", "plain values are left alone")
            #expect(sealedAfter?.first { $0.key == "/db/password" }?.value != sealedBefore?.first { $0.key == "/db/password" }?.value)
            #expect(try await cli.run("get", "app", "db/password").stdout == "second-\(Self.plaintext)\n")
            #expect(try await cli.run("get", "app", "api/token").stdout == "third-\(Self.plaintext)\n")

            // Without the key file nothing opens, and the error names the key.
            try FileManager.default.removeItem(atPath: String(keyFile.dropFirst("file://".count)))
            let locked = try await cli.run("get", "app", "db/password")
            #expect(locked.status == 2 && locked.stderr.contains(String(keyFile.dropFirst("file://".count))), "\(locked.stderr)")
            #expect(!locked.stdout.contains(Self.plaintext))

            let stored = try await evidence()
            #expect(!stored.isEmpty, "the evidence was read")
            #expect(!stored.contains(Self.plaintext), "the plaintext reached the store, its files or its log")
        }
    }

    @Test("a secret copied to another key, or rolled back to an older version, does not open")
    func swappedAndRolledBack() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        try await expectSuccess(cli.run("create", "app", "--encryption", keyFile))
        try await expectSuccess(cli.run("set", "app", "a", "alpha", "--secret"))
        try await expectSuccess(cli.run("set", "app", "b", "bravo", "--secret"))
        try await expectSuccess(cli.run("set", "app", "b", "bravo-2", "--secret"))

        // a's sealed bytes, as someone with write access to the store could copy them.
        let rawA = try #require(try await cli.run("ls", "app", "-r", "-f", "json").envelope().items?.first { $0.key == "/a" })
        let copyFile = try cli.write("copy.bin", try rawA.item().value)
        // The CLI does not let a plain set claim the secret marker…
        let marker = try await cli.run("set", "app", "c", "-d", copyFile, "--content-type", "application/vnd.discfg.secret")
        #expect(marker.status == 2)

        // …but the API can (it stores what clients send): a copy made that way is refused.
        let (server, port) = try await cli.serve()
        try await withServer(server) { _ in
            var remote = cli
            remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
            // Sealed bytes written through the API as they are, marked secret.
            func putSealed(_ key: String, _ bytes: Data) async throws -> String {
                try await LoopbackHTTP.exchange(port: port, "PUT /v1/app/keys/\(key)", body: bytes, headers: ["Content-Type: application/vnd.discfg.secret"])
            }
            let copied = try await putSealed("c", try rawA.item().value)
            #expect(copied.hasPrefix("HTTP/1.1 201"), "\(copied)")
            let refused = try await remote.run("get", "app", "c")
            #expect(refused.status == 2 && refused.stderr.contains("/c"), "\(refused.stderr)")
            #expect(!refused.stdout.contains("alpha"))

            // Roll b back to its first sealed value (version 1 written again as version 3).
            let first = try #require(try await remote.run("history", "app", "b", "-f", "json").envelope().events?.last?.item)
            let rolled = try await putSealed("b", try first.item().value)
            #expect(rolled.hasPrefix("HTTP/1.1 200"), "\(rolled)")
            let rollback = try await remote.run("get", "app", "b")
            #expect(rollback.status == 2 && rollback.stderr.contains("rolled back"), "\(rollback.stderr)")
            #expect(!rollback.stdout.contains("bravo"))
        }
    }

    @Test("bad secret input: no key on the config, a key file open to others, a key that is not there; nothing changes")
    func refusals() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await expectSuccess(cli.run("create", "plain"))
        let noKey = try await cli.run("set", "plain", "x", "1", "--secret")
        #expect(noKey.status == 2 && noKey.stderr.contains("no encryption key") && noKey.stderr.contains("--encryption"), "\(noKey.stderr)")
        #expect(try await cli.run("get", "plain", "x").status == 3, "nothing was stored")

        let open = try cli.write("open.key", Data("discfg-key-v1\n\(Data(repeating: 7, count: 32).base64EncodedString())\n".utf8))
        chmod(open, 0o644)
        let loose = try await cli.run("create", "loose", "--encryption", "file://\(open)")
        #expect(loose.status == 2 && loose.stderr.contains("chmod 600"), "\(loose.stderr)")
        #expect(try await cli.run("info", "loose").status == 3, "the config was not created")

        let missing = try await cli.run("create", "missing", "--encryption", "file://\(cli.directory.path)/nope.key")
        #expect(missing.status == 2 && missing.stderr.contains("discfg key init"), "\(missing.stderr)")
        let unknown = try await cli.run("create", "odd", "--encryption", "vault://x")
        #expect(unknown.status == 2 && unknown.stderr.contains("kms://"), "\(unknown.stderr)")

        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        let again = try await cli.run("key", "init")
        #expect(again.status == 2 && again.stderr.contains("never replaces"), "\(again.stderr)")
        #expect(try await cli.run("create", "sealed", "--encryption", keyFile).status == 0)
        let big = try cli.write("big.bin", Data(repeating: 0x61, count: Limits.maxValueBytes))
        let tooBig = try await cli.run("set", "sealed", "big", "-d", big, "--secret")
        #expect(tooBig.status == 1, "value too large is exit 1: \(tooBig.status) \(tooBig.stderr)")
        #expect(tooBig.stderr.contains("sealed"), "\(tooBig.stderr)")
        #expect(try await cli.run("get", "sealed", "big").status == 3, "nothing was stored")
    }

    @Test("a config encrypted with a KMS key on moto: secrets open through KMS; moving the data keys to a file key keeps them readable")
    func kms() async throws {
        try await withStore(.dynamodb) { cli, evidence in
            let moto = try await SharedMotoServer.shared.server()
            var cli = cli
            cli.environment["AWS_ENDPOINT_URL_KMS"] = moto.endpoint.absoluteString
            let alias = "alias/discfg-\(UUID().uuidString.prefix(8).lowercased())"
            let made = try await ChildProcess.run("python3", ["-c", """
                import boto3, sys
                kms = boto3.client("kms", region_name="us-east-1", endpoint_url=sys.argv[1], aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="discfg-test")
                key = kms.create_key()["KeyMetadata"]["KeyId"]
                kms.create_alias(AliasName=sys.argv[2], TargetKeyId=key)
                print(key)
                """, moto.endpoint.absoluteString, alias], environment: ChildProcess.environment())
            try #require(made.status == 0, "\(made.stderr)")
            try await expectSuccess(cli.run("create", "prod", "--encryption", "kms://us-east-1/\(alias)"))
            try await expectSuccess(cli.run("set", "prod", "db/password", Self.plaintext, "--secret"))
            #expect(try await cli.run("get", "prod", "db/password").stdout == Self.plaintext + "\n")
            #expect(try await cli.run("info", "prod").stdout.contains("kms://us-east-1/\(alias)"))

            let wrongAlias = try await cli.run("create", "other", "--encryption", "kms://us-east-1/alias/not-there")
            #expect(wrongAlias.status != 0 && wrongAlias.stderr.contains("alias/not-there"), "\(wrongAlias.stderr)")

            // A webhook secret set in the clear is sealed once the config gets a KMS key.
            try await expectSuccess(cli.run("create", "hooks"))
            try await expectSuccess(cli.run("update", "hooks", "--notify", "https://hooks.example.com/discfg", "--webhook-secret", "hook-\(Self.plaintext)"))
            #expect(try await evidence().contains("hook-\(Self.plaintext)"), "without a key it is stored as given")
            try await expectSuccess(cli.run("update", "hooks", "--encryption", "kms://us-east-1/\(alias)"))
            let sealedHooks = try await evidence()
            #expect(!sealedHooks.contains("hook-\(Self.plaintext)") && sealedHooks.contains("kms-sealed:"), "sealed with the new key")
            #expect(try await cli.run("info", "hooks").stdout.contains("https://hooks.example.com/discfg (signed)"))

            let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
            try await expectSuccess(cli.run("update", "prod", "--encryption", keyFile))
            var offline = cli
            offline.environment["AWS_ENDPOINT_URL_KMS"] = "http://127.0.0.1:9"
            #expect(try await offline.run("get", "prod", "db/password").stdout == Self.plaintext + "\n", "opened with the file key alone")
            #expect(!(try await evidence()).contains(Self.plaintext))
        }
    }

    @Test("without kms:Decrypt, reading a secret is one clear error naming the key and the permission, with nothing of the value")
    func kmsPermissionDenied() async throws {
        // This moto enforces IAM after the seven set-up requests below.
        try await withServer(try await MotoServer.start(environment: ["INITIAL_NO_AUTH_ACTION_COUNT": "7"])) { moto in
            let made = try await ChildProcess.run("python3", ["-c", """
                import boto3, json, sys
                args = dict(region_name="us-east-1", endpoint_url=sys.argv[1], aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="discfg-test")
                key = boto3.client("kms", **args).create_key()["KeyMetadata"]["KeyId"]
                iam = boto3.client("iam", **args)
                users = {}
                for user, actions in [("writer", ["kms:*"]), ("reader", ["kms:GenerateDataKey", "kms:DescribeKey"])]:
                    iam.create_user(UserName=user)
                    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
                    iam.put_user_policy(UserName=user, PolicyName="kms", PolicyDocument=json.dumps(policy))
                    access = iam.create_access_key(UserName=user)["AccessKey"]
                    users[user] = [access["AccessKeyId"], access["SecretAccessKey"]]
                print(json.dumps({"key": key, "users": users}))
                """, moto.endpoint.absoluteString], environment: ChildProcess.environment())
            try #require(made.status == 0, "\(made.stderr)")
            struct SetUp: Decodable { var key: String; var users: [String: [String]] }
            let setUp = try JSONDecoder().decode(SetUp.self, from: Data(made.stdout.utf8))
            var writer = try CLIRunner()
            defer { writer.cleanUp() }
            writer.environment["AWS_ENDPOINT_URL_KMS"] = moto.endpoint.absoluteString
            writer.environment["AWS_REGION"] = "us-east-1"
            var reader = writer
            writer.environment["AWS_ACCESS_KEY_ID"] = setUp.users["writer"]?[0]
            writer.environment["AWS_SECRET_ACCESS_KEY"] = setUp.users["writer"]?[1]
            reader.environment["AWS_ACCESS_KEY_ID"] = setUp.users["reader"]?[0]
            reader.environment["AWS_SECRET_ACCESS_KEY"] = setUp.users["reader"]?[1]

            try await expectSuccess(writer.run("create", "prod", "--encryption", "kms://us-east-1/\(setUp.key)"))
            try await expectSuccess(writer.run("set", "prod", "db/password", Self.plaintext, "--secret"))
            #expect(try await writer.run("get", "prod", "db/password").stdout == Self.plaintext + "\n")

            for command in [["get", "prod", "db/password"], ["ls", "prod", "--recursive", "--reveal"], ["export", "prod", "--reveal"]] {
                let denied = try await reader.run(command)
                #expect(denied.status != 0, "\(command): \(denied.stdout)")
                #expect(denied.stderr.contains("kms:Decrypt") && denied.stderr.contains(setUp.key), "\(command): \(denied.stderr)")
                #expect(!denied.stdout.contains(Self.plaintext) && !denied.stderr.contains(Self.plaintext))
            }
            // Without --reveal the reader lists the config, the secret masked.
            let masked = try await reader.run("ls", "prod", "--recursive")
            #expect(masked.status == 0 && masked.stdout.contains("(secret)"), "\(masked.stderr)")
        }
    }

    // MARK: - Fixtures

    /// Runs `body` with a CLI whose default store is of `kind`, and a function that reads
    /// everything the store kept (files, table items, server log) for plaintext checks.
    private func withStore(_ kind: Kind, _ body: (CLIRunner, @escaping () async throws -> String) async throws -> Void) async throws {
        switch kind {
        case .sqlite:
            let cli = try CLIRunner()
            defer { cli.cleanUp() }
            try await body(cli) { try Self.storeFiles(cli) }
        case .dynamodb:
            var (cli, store) = try await CLIRunner.onDynamoDB()
            defer { cli.cleanUp() }
            cli.environment["DISCFG_STORE"] = store
            try await expectSuccess(cli.run("init"))
            let table = String(store.split(separator: "/")[2].split(separator: "?")[0])
            let endpoint = String(store.split(separator: "=", maxSplits: 1)[1])
            try await body(cli) {
                let scan = try await ChildProcess.run("python3", ["-c", """
                    import boto3, sys, json
                    db = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=sys.argv[1], aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="discfg-test")
                    items = db.scan(TableName=sys.argv[2])["Items"]
                    print(json.dumps(items, default=lambda b: b.decode("latin-1")))
                    """, endpoint, table], environment: ChildProcess.environment())
                guard scan.status == 0 else { throw DiscfgError(.unavailable, "scan failed: \(scan.stderr)") }
                return scan.stdout
            }
        case .remote:
            let cli = try CLIRunner()
            defer { cli.cleanUp() }
            let log = cli.directory.appendingPathComponent("serve.log").path
            let server = try cli.launch(["serve", "--port", "0", "--log-level", "debug"], stdout: .file(log))
            let port = try await server.announcedPort()
            try await withServer(server) { server in
                var remote = cli
                remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
                try await body(remote) {
                    let files = try Self.storeFiles(cli)
                    return files + (try String(contentsOfFile: log, encoding: .utf8)) + server.output.stderr
                }
            }
        }
    }

    /// Every byte of the SQLite store's files (the database, its WAL), as Latin-1 text.
    private static func storeFiles(_ cli: CLIRunner) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).filter { $0.hasPrefix("store.db") }
        return try names.map { String(decoding: try Data(contentsOf: cli.directory.appendingPathComponent($0)), as: UTF8.self) }.joined()
    }

    private func expectSuccess(_ result: CLIRunner.Result, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
    }
}
