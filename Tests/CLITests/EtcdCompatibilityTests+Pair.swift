import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The pair each compatibility test runs against: a real etcd beside `serve --etcd`, the
/// comparison of their outputs, and the reading of their watches.
extension EtcdCompatibilityTests {
    // MARK: The two servers

    /// Runs `body` with a fresh etcd and a fresh `serve --etcd`, and stops both after,
    /// whether it threw or not.
    static func withPair(_ backing: EtcdPeer.Backing, _ body: (Pair) async throws -> Void) async throws {
        let etcd = try await RealEtcd.start()
        let discfg: EtcdPeer
        do {
            discfg = try await EtcdPeer.start(backing)
        } catch {
            await etcd.stop()
            throw error
        }
        do {
            var pair = Pair(etcd: etcd.endpoint, discfg: EtcdEndpoint(name: "discfg", port: discfg.etcdPort, home: discfg.cli.directory.path))
            try await pair.measureOffset()
            try await body(pair)
        } catch {
            await etcd.stop()
            await discfg.stop()
            throw error
        }
        await etcd.stop()
        await discfg.stop()
    }

    // MARK: Comparing

    /// The two sides, each command run on both.
    struct Pair: Sendable {
        var etcd: EtcdEndpoint
        var discfg: EtcdEndpoint

        /// Runs `etcdctl arguments…` on both at once.
        func both(_ arguments: [String], stdin: String? = nil) async throws -> (etcd: Output, discfg: Output) {
            async let onEtcd = etcd.etcdctl(arguments, stdin: stdin)
            async let onDiscfg = discfg.etcdctl(arguments, stdin: stdin)
            return try await (onEtcd, onDiscfg)
        }

        /// The header revision of each side's answer to the first command: their
        /// difference is etcd's offset for the rest of the pair's life.
        mutating func measureOffset() async throws {
            let answers = try await both(["get", "-w", "json", "compatibility-probe"])
            #expect(answers.etcd.termination == .exited(0), "etcd: \(answers.etcd.logs)")
            #expect(answers.discfg.termination == .exited(0), "discfg: \(answers.discfg.logs)")
            let etcdRevision = try Self.headerRevision(answers.etcd.stdoutData)
            let discfgRevision = try Self.headerRevision(answers.discfg.stdoutData)
            etcd.offset = etcdRevision - discfgRevision
            // etcd's empty store is at revision 1; discfg's empty config at 0.
            #expect(etcd.offset >= 0, "etcd at \(etcdRevision), discfg at \(discfgRevision)")
        }

        static func headerRevision(_ json: Data) throws -> Int {
            let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            let header = try #require(object["header"] as? [String: Any])
            return (header["revision"] as? NSNumber)?.intValue ?? 0
        }

        /// The command succeeds on both with the same standard output, byte for byte;
        /// that output.
        @discardableResult
        func same(_ arguments: String..., stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
            try await same(arguments, stdin: stdin, sourceLocation: sourceLocation)
        }

        @discardableResult
        func same(_ arguments: [String], stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
            let answers = try await both(arguments, stdin: stdin)
            let command = "etcdctl \(arguments.joined(separator: " "))" + (stdin.map { " <<< \($0.debugDescription)" } ?? "")
            #expect(answers.etcd.termination == .exited(0), "etcd: \(command)\n\(answers.etcd.logs)", sourceLocation: sourceLocation)
            #expect(answers.discfg.termination == .exited(0), "discfg: \(command)\n\(answers.discfg.logs)", sourceLocation: sourceLocation)
            #expect(
                answers.discfg.stdout == answers.etcd.stdout,
                "\(command)\netcd:\n\(answers.etcd.stdout)\ndiscfg:\n\(answers.discfg.stdout)", sourceLocation: sourceLocation
            )
            return answers.etcd.stdout
        }

        /// The command succeeds on both with `-w json`, and the outputs agree in every
        /// field, revisions in discfg's numbering; etcd's, so normalized.
        @discardableResult
        func sameJSON(_ arguments: String..., stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
            try await sameJSON(arguments, stdin: stdin, sourceLocation: sourceLocation)
        }

        @discardableResult
        func sameJSON(_ arguments: [String], stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
            let answers = try await both(["-w", "json"] + arguments, stdin: stdin)
            let command = "etcdctl -w json \(arguments.joined(separator: " "))" + (stdin.map { " <<< \($0.debugDescription)" } ?? "")
            #expect(answers.etcd.termination == .exited(0), "etcd: \(command)\n\(answers.etcd.logs)", sourceLocation: sourceLocation)
            #expect(answers.discfg.termination == .exited(0), "discfg: \(command)\n\(answers.discfg.logs)", sourceLocation: sourceLocation)
            guard answers.etcd.termination == .exited(0), answers.discfg.termination == .exited(0) else { return "" }
            // txn -i prints its prompts before the JSON.
            let onEtcd = try normalizedJSON(Self.lastLine(answers.etcd.stdout), side: etcd, command: command, sourceLocation: sourceLocation)
            let onDiscfg = try normalizedJSON(Self.lastLine(answers.discfg.stdout), side: discfg, command: command, sourceLocation: sourceLocation)
            #expect(onDiscfg == onEtcd, "\(command)\netcd (revisions less \(etcd.offset)):\n\(onEtcd)\ndiscfg:\n\(onDiscfg)", sourceLocation: sourceLocation)
            return onEtcd
        }

        /// The command fails on both, with the same standard output and the same error:
        /// etcdctl's `Error:` line and the gRPC status it reports.
        func sameFailure(_ arguments: String..., stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let answers = try await both(arguments, stdin: stdin)
            let command = "etcdctl \(arguments.joined(separator: " "))" + (stdin.map { " <<< \($0.debugDescription)" } ?? "")
            #expect(answers.etcd.termination != .exited(0), "etcd: \(command) succeeded\n\(answers.etcd.logs)", sourceLocation: sourceLocation)
            #expect(answers.discfg.termination == answers.etcd.termination, "\(command)\netcd: \(answers.etcd.logs)\ndiscfg: \(answers.discfg.logs)", sourceLocation: sourceLocation)
            #expect(answers.discfg.stdout == answers.etcd.stdout, "\(command)\netcd:\n\(answers.etcd.stdout)\ndiscfg:\n\(answers.discfg.stdout)", sourceLocation: sourceLocation)
            let etcdSaid = Self.failure(answers.etcd), discfgSaid = Self.failure(answers.discfg)
            #expect(!etcdSaid.isEmpty, "etcd: \(command)\n\(answers.etcd.logs)", sourceLocation: sourceLocation)
            #expect(discfgSaid == etcdSaid, "\(command)\netcd:\n\(etcdSaid)\ndiscfg:\n\(discfgSaid)", sourceLocation: sourceLocation)
        }

        /// What etcdctl says of a failure: its `Error:` lines and each gRPC status it
        /// logged (the rest of that log line holds a time and a client id).
        static func failure(_ output: Output) -> String {
            var said: [String] = []
            for line in output.stderr.split(separator: "\n") {
                if line.hasPrefix("Error:") { said.append(String(line)) }
                if let range = line.range(of: #"rpc error: code = [A-Za-z]+ desc = [^"]*"#, options: .regularExpression) {
                    said.append(String(line[range]))
                }
            }
            return said.joined(separator: "\n")
        }

        static func lastLine(_ text: String) -> String {
            String(text.split(separator: "\n").last ?? "")
        }

        /// etcdctl's JSON, canonical (sorted keys), with the top header's identity
        /// checked and removed and every revision in discfg's numbering.
        func normalizedJSON(_ line: String, side: EtcdEndpoint, command: String, sourceLocation: SourceLocation) throws -> String {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            let normalized = Self.normalized(object, side: side, top: true, command: command, sourceLocation: sourceLocation)
            return String(decoding: try JSONSerialization.data(withJSONObject: normalized, options: [.sortedKeys]), as: UTF8.self)
        }

        /// `value` with revisions less the side's offset. The top header's cluster_id,
        /// member_id and raft_term must be there and nonzero, and are removed; a header's
        /// absent revision (0 is left out) becomes 0. Nested headers keep every other
        /// field, so one the other side lacks shows.
        static func normalized(_ value: Any, side: EtcdEndpoint, top: Bool, command: String, sourceLocation: SourceLocation) -> Any {
            if let array = value as? [Any] {
                return array.map { normalized($0, side: side, top: false, command: command, sourceLocation: sourceLocation) }
            }
            guard let object = value as? [String: Any] else { return value }
            var result: [String: Any] = [:]
            for (key, field) in object {
                switch key {
                case "header", "Header":
                    var header = field as? [String: Any] ?? [:]
                    if top {
                        for name in ["cluster_id", "member_id", "raft_term"] {
                            let number = (header[name] as? NSNumber)?.doubleValue ?? 0
                            #expect(number != 0, "\(side.name): \(command): the header's \(name) is missing or 0: \(object)", sourceLocation: sourceLocation)
                            header[name] = nil
                        }
                    }
                    let revision = (header["revision"] as? NSNumber)?.intValue ?? 0
                    header["revision"] = revision > 0 ? revision - side.offset : 0
                    result[key] = normalized(header, side: side, top: false, command: command, sourceLocation: sourceLocation)
                case "revision", "create_revision", "mod_revision", "CompactRevision", "compact_revision":
                    let number = (field as? NSNumber)?.intValue ?? 0
                    result[key] = number > 0 && key != "revision" ? number - side.offset : number
                default:
                    result[key] = normalized(field, side: side, top: false, command: command, sourceLocation: sourceLocation)
                }
            }
            return result
        }
    }

    // MARK: Watches

    /// The watch responses etcdctl printed with `-w json`, one a line (a line not yet
    /// ended is left for later).
    static func watchResponses(_ stdout: String) -> [[String: Any]] {
        var lines = stdout.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func eventCount(_ stdout: String) -> Int {
        watchResponses(stdout).reduce(0) { $0 + (($1["Events"] as? [Any])?.count ?? 0) }
    }

    /// Each event of a JSON watch with the response that carried it (its header's
    /// revision, compaction and flags), canonical, in discfg's numbering. How events are
    /// grouped into responses is not compared: etcd sends the events it replays from
    /// history in one response, discfg one response per revision.
    static func watchEvents(_ stdout: String, side: EtcdEndpoint, command: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        watchResponses(stdout).flatMap { response -> [String] in
            let normalized = Pair.normalized(response, side: side, top: true, command: command, sourceLocation: sourceLocation) as? [String: Any] ?? [:]
            var carrier = normalized
            carrier["Events"] = nil
            return (normalized["Events"] as? [Any] ?? []).map { event in
                let pairing: [String: Any] = ["response": carrier, "event": event]
                return (try? JSONSerialization.data(withJSONObject: pairing, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "?"
            }
        }
    }

    /// Waits until each side's JSON watcher has printed `count` events.
    static func awaitEvents(_ count: Int, _ watchers: [ChildProcess]) async throws {
        for watcher in watchers {
            _ = try await watcher.waitForOutput(timeout: .seconds(120)) { output -> Int? in
                let seen = eventCount(output.stdout)
                return seen >= count ? seen : nil
            }
        }
    }
}
