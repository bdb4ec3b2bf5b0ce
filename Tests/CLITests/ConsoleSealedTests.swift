import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The console's opener (`console/sealed.js`), run by Node.js on values the CLI sealed:
/// it opens what discfg opens and refuses what discfg refuses, with the same binding.
@Suite("Web console: sealed.js opens the CLI's seals with the same binding")
struct ConsoleSealedTests {

    @Test("a secret opens with its key file; moved to another create revision or version (a rollback), it does not")
    func binding() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = try #require(try await cli.run("key", "init", "-f", "json").envelope().encryptionKey)
        #expect(try await cli.run("create", "app", "--encryption", keyFile).status == 0)
        #expect(try await cli.run("set", "app", "other", "x").status == 0)
        #expect(try await cli.run(["set", "app", "db/password", "--secret", "-d", "-"], stdin: Data("s3cret-in-browser".utf8)).status == 0)
        _ = try cli.write("items.json", Data(try await cli.run("ls", "app", "-r", "-f", "json").stdout.utf8))
        _ = try cli.write("info.json", Data(try await cli.run("info", "app", "-f", "json").stdout.utf8))
        // An ES module beside the check, so `import` finds it without a package.json.
        try FileManager.default.copyItem(atPath: ConsoleTests.root.appendingPathComponent("console/sealed.js").path, toPath: cli.directory.appendingPathComponent("sealed.mjs").path)
        _ = try cli.write("check.mjs", Data("""
            import { readFileSync } from 'node:fs';
            import { webcrypto } from 'node:crypto';
            globalThis.crypto ??= webcrypto;  // Node.js 18 (Debian's) has Web Crypto only here
            import { importKeyFile, openSealed, unwrapDataKey, acceptsLegacySeals } from './sealed.mjs';
            const item = JSON.parse(readFileSync('items.json')).items.find((i) => i.key === '/db/password');
            const encryption = JSON.parse(readFileSync('info.json')).info.settings.encryption;
            const fileKey = await importKeyFile(readFileSync(process.argv[2], 'utf8'));
            const dataKeyFor = (id) => unwrapDataKey(fileKey, 'app', id, encryption.dataKeys.find((k) => k.id === id).wrapped);
            const legacy = async () => acceptsLegacySeals(encryption);
            console.log('opened ' + (await openSealed('app', item, dataKeyFor, legacy)).text);
            for (const [name, moved] of [['createRevision', { ...item, createRevision: item.createRevision + 1 }], ['version', { ...item, version: item.version + 1 }], ['key', { ...item, key: '/db/other' }]]) {
              try { await openSealed('app', moved, dataKeyFor, legacy); console.log('OPENED ' + name); } catch (error) { console.log('refused ' + name + ': ' + error.message); }
            }
            console.log('accepts legacy ' + acceptsLegacySeals(encryption));
            """.utf8))
        let run = try await ChildProcess.run(
            try #require(nodeProgram, "Node.js runs the console's opener here; scripts/setup installs it"), ["check.mjs", String(keyFile.dropFirst("file://".count))], environment: ChildProcess.environment(), directory: cli.directory.path
        )
        #expect(run.status == 0, "\(run.logs)")
        #expect(run.stdout.contains("opened s3cret-in-browser"), "\(run.stdout)")
        #expect(run.stdout.contains("refused createRevision: ") && run.stdout.contains("refused version: ") && run.stdout.contains("refused key: "), "\(run.stdout)")
        #expect(run.stdout.contains("rolled back") && !run.stdout.contains("OPENED"), "\(run.stdout)")
        #expect(run.stdout.contains("accepts legacy false"), "a config made now refuses first-format values")
    }
}

/// Node.js, where it is installed.
private let nodeProgram: String? = ["/usr/bin/node", "/usr/local/bin/node"].first { FileManager.default.isExecutableFile(atPath: $0) }
