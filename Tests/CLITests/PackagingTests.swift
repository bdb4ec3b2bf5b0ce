import DiscfgTestSupport
import Foundation
import Testing

/// The Debian package's service files, read as `scripts/release` packs them (a release
/// build is too slow for the suite): the systemd unit, the settings file's mode, and the
/// postinst that sets it, run against a scratch root.
@Suite("Packaging: the service's unit and its settings file keep secrets to root and discfg")
struct PackagingTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("the unit dumps no core, reads /etc/default/discfg as its environment, and puts only DISCFG_SERVE_OPTIONS on the command line")
    func unit() throws {
        let lines = try Self.text("packaging/discfg.service").split(separator: "\n").map(String.init)
        #expect(lines.contains("LimitCORE=0"), "a crash of serve would write its memory, tokens' records and all, to a core file")
        #expect(lines.contains("EnvironmentFile=-/etc/default/discfg"))
        #expect(lines.filter { $0.hasPrefix("ExecStart=") } == ["ExecStart=/usr/bin/discfg serve $DISCFG_SERVE_OPTIONS"])
    }

    @Test("the release packs /etc/default/discfg 0640, and postinst makes it root:discfg 0640, an older 0644 one too")
    func settingsFileMode() async throws {
        let release = try Self.text("scripts/release")
        let install = release.split(separator: "\n").filter { $0.contains("packaging/discfg.default") }
        #expect(install == [#"install -D -m 0640 "$source_dir/packaging/discfg.default" "$root/etc/default/discfg""#], "\(install)")

        // postinst against a scratch root (DPKG_ROOT, as dpkg gives it), with the commands
        // that would touch the machine's users and services replaced by ones that log.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-postinst-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let root = scratch.appendingPathComponent("root"), bin = scratch.appendingPathComponent("bin"), log = scratch.appendingPathComponent("calls")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("etc/default"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let settings = root.appendingPathComponent("etc/default/discfg")
        try Data(try Self.text("packaging/discfg.default").utf8).write(to: settings)
        #expect(chmod(settings.path, 0o644) == 0)
        for command in ["getent", "adduser", "install", "chown", "systemctl", "deb-systemd-invoke"] {
            let stub = bin.appendingPathComponent(command)
            try Data("#!/bin/sh\necho \"\(command) $*\" >> '\(log.path)'\n".utf8).write(to: stub)
            #expect(chmod(stub.path, 0o755) == 0)
        }
        let environment = ChildProcess.environment(["PATH": "\(bin.path):/usr/bin:/bin", "DPKG_ROOT": root.path])
        let postinst = try await ChildProcess.run("/bin/sh", [Self.repository.appendingPathComponent("packaging/deb/postinst").path, "configure", "0.1.0"], environment: environment)
        #expect(postinst.status == 0, "\(postinst.stderr)")
        var status = stat()
        #expect(stat(settings.path, &status) == 0)
        #expect(String(status.st_mode & 0o777, radix: 8) == "640")
        let calls = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(calls.split(separator: "\n").contains("chown root:discfg \(settings.path)"), "\(calls)")
    }

    @Test("the settings file says which variables carry secrets and keeps them out of DISCFG_SERVE_OPTIONS")
    func settingsFileSecrets() throws {
        let settings = try Self.text("packaging/discfg.default")
        for name in ["DISCFG_TOKEN", "AWS_SECRET_ACCESS_KEY"] {
            #expect(settings.contains("#\(name)="), "\(name) is not shown")
        }
        #expect(settings.contains("never in DISCFG_SERVE_OPTIONS"))
    }
}
