import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// An acknowledged write survives the writer being killed at any moment.
@Suite("CLI: durability")
struct DurabilityTests {
    @Test("SIGKILL during a stream of sets: every acknowledged value is stored, the file is intact")
    func killedWriter() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "crash")
        // A shell loop acknowledges each value only after `discfg set` returned.
        let script = "for i in $(seq 1 100000); do \"$DISCFG\" set crash counter $i -f silent || exit 1; echo $i; done"
        let output = try await withServer(try cli.launchShell(script, stderr: .discard)) { loop in
            // Let it write for a while, then kill the shell and whichever `discfg set` runs:
            // the loop has a process group of its own.
            _ = try await loop.waitForOutput(timeout: .seconds(120)) { $0.stdoutLines.count >= 10 ? true : nil }
            await loop.kill(SIGKILL)
            // Standard output ends once every process of the group has died.
            return try await loop.wait(timeout: .seconds(60))
        }

        let acknowledged = output.stdoutLines.compactMap { Int($0) }.max() ?? 0
        #expect(acknowledged > 0, "the loop acknowledged no write before it was killed")
        let stored = try await cli.run("get", "crash", "counter")
        #expect(stored.status == 0, "stderr: \(stored.stderr)")
        let value = Int(stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(value >= acknowledged, "acknowledged \(acknowledged) but the store holds \(value)")
        // The killed writer may have committed one more than it acknowledged, never less.
        #expect(value <= acknowledged + 1)
        let info = try await cli.run("info", "crash", "-f", "json").envelope()
        #expect(info.revision?.rawValue == UInt64(value))
        let integrity = try await cli.run("set", "crash", "after", "ok")
        #expect(integrity.status == 0)
    }

    @Test("SIGKILL of serve during a stream of PUTs taken on its event loop: every acknowledged value is stored", .timeLimit(.minutes(3)))
    func killedServer() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "crash")
        // One keep-alive connection; http.client sends each small request in one write, so
        // the server takes it on its event loop.
        let acknowledged = try await Self.killServer(cli, after: 200, sending: """
            c.request("PUT", "/v1/crash/keys/counter", body=str(i).encode())
            """)
        let stored = try await cli.run("get", "crash", "counter")
        #expect(stored.status == 0, "stderr: \(stored.stderr)")
        let value = Int(stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(value >= acknowledged, "acknowledged \(acknowledged) but the store holds \(value)")
        #expect(value <= acknowledged + 1)
        let metrics = try await cli.run("info", "crash", "-f", "json").envelope()
        #expect(metrics.revision?.rawValue == UInt64(value))
    }

    @Test("SIGKILL of serve during a stream of three-key transactions: every acknowledged one is stored whole, none in part", .timeLimit(.minutes(3)))
    func killedServerMidTransaction() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "crash")
        // Transaction i deletes /old/(i-1), puts /old/i and writes i to /a, /b and /c, one
        // revision.
        let acknowledged = try await Self.killServer(cli, after: 200, sending: """
            ops = [{"op": "delete", "key": "/old/%d" % (i - 1)}, {"op": "put", "key": "/old/%d" % i, "value": str(i)}]
            ops += [{"op": "put", "key": k, "value": str(i)} for k in ("/a", "/b", "/c")]
            c.request("POST", "/v1/crash/txn", body=json.dumps({"success": ops}).encode(), headers={"Content-Type": "application/json"})
            """)
        var values: [String: String] = [:]
        for key in ["/a", "/b", "/c"] {
            let stored = try await cli.run("get", "crash", key)
            #expect(stored.status == 0, "\(key): \(stored.stderr)")
            values[key] = stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let value = Int(values["/a"] ?? "") ?? -1
        #expect(Set(values.values).count == 1, "a transaction was kept in part: \(values)")
        #expect(value >= acknowledged, "acknowledged \(acknowledged) but the store holds \(value)")
        #expect(value <= acknowledged + 1)
        // Exactly one /old/N, the last transaction's, and one revision per transaction.
        let old = try await cli.run("ls", "crash", "/old/", "-f", "json")
        #expect(old.stdout.contains("/old/\(value)"), "\(old.stdout)")
        #expect(!old.stdout.contains("/old/\(value - 1)\""), "\(old.stdout)")
        let info = try await cli.run("info", "crash", "-f", "json").envelope()
        #expect(info.revision?.rawValue == UInt64(value))
    }

    @Test("SIGKILL of serve during a stream of PUTs with a token and a message: every acknowledged change keeps who made it and why", .timeLimit(.minutes(3)))
    func killedServerKeepsAttribution() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "crash")
        let created = try await cli.run("token", "create", "--role", "write", "--description", "deployer")
        let token = String(created.stdout.split(separator: "\n").first ?? "")
        let id = String(token.dropFirst(5).prefix(12))
        #expect(created.status == 0 && token.hasPrefix("dcfg_"), "\(created.stderr)")
        // Tokens exist, so serve requires one; the later PUTs are taken on its event loop.
        let acknowledged = try await Self.killServer(cli, after: 200, sending: """
            c.request("PUT", "/v1/crash/keys/counter", body=str(i).encode(), headers={"Authorization": "Bearer \(token)", "Discfg-Message": "deploy %d" % i})
            """)
        let stored = Int(try await cli.run("get", "crash", "counter").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(stored >= acknowledged && stored <= acknowledged + 1, "acknowledged \(acknowledged) but the store holds \(stored)")
        // Read back after the restart of the store: each change is at the revision of its number.
        for revision in [1, acknowledged, stored] {
            let log = try await cli.run("log", "crash", "--revision", String(revision), "-f", "json").envelope()
            let event = try #require(log.events?.first, "no change at revision \(revision)")
            #expect(event.item?.value == String(revision))
            #expect(event.by == Principal(kind: .token, id: id, description: "deployer"), "revision \(revision): \(String(describing: event.by))")
            #expect(event.message == "deploy \(revision)")
        }
    }

    /// Starts `serve` and sends it request after request from one keep-alive connection
    /// (`request`: Python that sends request number `i` on connection `c`), each number
    /// printed once its request was answered 2xx; kills the server with SIGKILL once
    /// `count` were, and returns the highest number acknowledged.
    static func killServer(_ cli: CLIRunner, after count: Int, sending request: String) async throws -> Int {
        let (server, port) = try await cli.serve()
        let indented = request.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
        let client = """
        import http.client, json, sys
        c = http.client.HTTPConnection("127.0.0.1", \(port))
        for i in range(1, 1000000):
        \(indented)
            r = c.getresponse(); r.read()
            if r.status >= 300: sys.exit(1)
            print(i, flush=True)
        """
        let output = try await withServer(try cli.launchShell("exec python3 -c '\(client)'", stderr: .discard)) { loop in
            _ = try await loop.waitForOutput(timeout: .seconds(120)) { $0.stdoutLines.count >= count ? true : nil }
            _ = await server.kill(SIGKILL)
            return try await loop.wait(timeout: .seconds(60))
        }
        let acknowledged = output.stdoutLines.compactMap { Int($0) }.max() ?? 0
        #expect(acknowledged >= count)
        return acknowledged
    }
}

/// A file from before key chains is upgraded on first open, saying so when the wait is long.
@Suite("CLI: upgrading a SQLite file")
struct SQLiteUpgradeTests {
    @Test("a schema 5 file with 100,000 history rows: the first open links them and says so once; the history reads as before")
    func largeFileAnnouncesItsUpgrade() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        try await cli.run("create", "app", "--history", "forever")
        try await cli.run("set", "app", "/k", "one")
        // Back to schema 5, with 100,000 more changes of /k (revisions 2...100001).
        let script = """
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        db.executescript('''
        ALTER TABLE history DROP COLUMN seq; ALTER TABLE history DROP COLUMN prev_revision; ALTER TABLE history DROP COLUMN prev_sub;
        ALTER TABLE history DROP COLUMN jump_revision; ALTER TABLE history DROP COLUMN jump_sub; ALTER TABLE history DROP COLUMN jump_seq;
        ALTER TABLE kv DROP COLUMN mod_sub; DROP TABLE tombstones; ALTER TABLE configs DROP COLUMN byte_count;
        ALTER TABLE history DROP COLUMN by_kind; ALTER TABLE history DROP COLUMN by_id; ALTER TABLE history DROP COLUMN by_description; ALTER TABLE history DROP COLUMN message;
        CREATE INDEX history_by_key ON history (config, key, revision);
        WITH RECURSIVE n(r) AS (SELECT 2 UNION ALL SELECT r + 1 FROM n WHERE r < 100001)
        INSERT INTO history (config, revision, sub, kind, key, at, value, version, create_revision,
                             prev_value, prev_version, prev_create_revision, prev_mod_revision, prev_modified_at)
        SELECT 'app', r, 0, 'put', '/k', 0, CAST('v' || r AS BLOB), r, 1, CAST('v' || (r - 1) AS BLOB), r - 1, 1, r - 1, 0 FROM n;
        UPDATE kv SET value = CAST('v100001' AS BLOB), version = 100001, mod_revision = 100001;
        UPDATE configs SET revision = 100001;
        PRAGMA user_version = 5;
        ''')
        db.commit()
        """
        let downgrade = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", script, cli.directory.appendingPathComponent("store.db").path], environment: cli.environment)
        #expect(downgrade.status == 0, "\(downgrade.stderr)")

        let first = try await cli.run("get", "app", "/k")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("upgrading") && first.stderr.contains("linking 100001 history rows"), "\(first.stderr)")
        #expect(first.stdout.contains("v100001"), "\(first.stdout)")
        let second = try await cli.run("history", "app", "/k", "--limit", "2")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!second.stderr.contains("upgrading"), "once only: \(second.stderr)")
        #expect(second.stdout.contains("v100001") && second.stdout.contains("v100000"), "\(second.stdout)")
        let past = try await cli.run("get", "app", "/k", "--revision", "50000")
        #expect(past.stdout.contains("v50000") && !past.stdout.contains("v50001"), "\(past.stdout)\(past.stderr)")
    }
}
