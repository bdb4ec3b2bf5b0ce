import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// `create`/`update --quota SIZE` and `info`: sizes with units, read within bounds, and a
/// change past the quota refused with exit 1 and nothing changed.
@Suite("CLI: config quotas")
struct QuotaCommandTests {
    @Test("create --quota 1KiB: writes past it exit 1 naming the quota, deletes pass; info shows the quota and the size; update --quota none removes it")
    func quota() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let created = try await cli.run("create", "app", "--quota", "1KiB")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("quota: 1 KiB"), "\(created.stdout)")
        try await cli.run("use", "app")
        let value = String(repeating: "v", count: 500)
        #expect(try await cli.run("set", "/a", value).status == 0)
        #expect(try await cli.run("set", "/b", value).status == 0)

        let refused = try await cli.run("set", "/c", value)
        #expect(refused.status == 1, "\(refused.status) \(refused.stderr)")
        #expect(refused.stderr.contains("1024") && refused.stderr.contains("1506") && refused.stderr.contains("quota"), "\(refused.stderr)")
        #expect(try await cli.run("get", "/c").status == 3, "nothing was written")

        let info = try await cli.run("info")
        #expect(info.stdout.contains("1004 bytes of key paths and values"), "\(info.stdout)")
        #expect(info.stdout.contains("1 KiB (98% used)"), "\(info.stdout)")
        let json = try await cli.run("info", "-f", "json").envelope()
        #expect(json.configInfo?.settings.quotaBytes == 1024)
        #expect(json.configInfo?.byteCount == 1004)

        #expect(try await cli.run("delete", "/a").status == 0, "a delete passes")
        #expect(try await cli.run("set", "/c", value).status == 0)
        let removed = try await cli.run("update", "--quota", "none")
        #expect(removed.status == 0 && removed.stdout.contains("quota: none"), "\(removed.stdout) \(removed.stderr)")
        #expect(try await cli.run("set", "/d", String(repeating: "w", count: 2000)).status == 0)
        #expect(try await cli.run("info").stdout.contains("quota          none"))
        let raised = try await cli.run("update", "app", "--quota", "2 MB")
        #expect(raised.stdout.contains("quota: 2000000 bytes"), "\(raised.stdout) \(raised.stderr)")
    }

    @Test("--quota takes sizes with units and refuses 0, negatives, overflow and unknown units with exit 2, changing nothing", arguments: [
        "0", "-1", "0MiB", "9223372036854775808", "18446744073709551616", "8388608PiB", "2PiB", "1125899906842625", "12XB", "MiB", "1.5GiB",
    ])
    func badSizes(_ size: String) async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try await cli.run("create", "app").status == 0)
        // `--quota=-1`: a separate "-1" would be read as a flag.
        let created = try await cli.run("create", "other", "--quota=\(size)")
        #expect(created.status == 2, "\(size): \(created.status) \(created.stderr)")
        #expect(created.stderr.hasPrefix("discfg: --quota must be a size from 1 byte to 1 PiB"), "\(size): \(created.stderr)")
        let updated = try await cli.run("update", "app", "--quota=\(size)")
        #expect(updated.status == 2, "\(size): \(updated.stderr)")
        #expect(try await cli.run("info", "app", "-f", "json").envelope().configInfo?.settings.quotaBytes == nil)
        #expect(try await cli.run("info", "other").status == 3, "no config was created")
    }

    @Test("sizes are read in bytes, IEC and SI units, any case")
    func units() throws {
        let field = NumberField.quotaBytes.named("--quota")
        #expect(try ByteSize.parse("1", as: field) == 1)
        #expect(try ByteSize.parse("512MiB", as: field) == 512 * 1024 * 1024)
        #expect(try ByteSize.parse("512 mib", as: field) == 512 * 1024 * 1024)
        #expect(try ByteSize.parse("2GB", as: field) == 2_000_000_000)
        #expect(try ByteSize.parse("1PiB", as: field) == Limits.maxQuotaBytes)
        #expect(try ByteSize.parse("10kB", as: field) == 10_000)
        #expect(ByteSize.text(536_870_912) == "512 MiB")
        #expect(ByteSize.text(1536 * 1024) == "1536 KiB")
        #expect(ByteSize.text(1000) == "1000 bytes")
    }
}
