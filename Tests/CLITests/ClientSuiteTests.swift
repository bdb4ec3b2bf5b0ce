import DiscfgTestSupport
import Foundation
import Testing

/// The etcd client libraries' own test suites, unchanged, against `serve --etcd`: Debian's
/// python-etcd3, aetcd and etcd3gw. Every test of a suite passes but those its library's
/// ``ClientSuite`` names with the reason (the ones etcd fails too, what discfg does not
/// serve), and each of those does not pass, so the list stays true; a test waiting on work
/// being built is a known issue until it passes.
/// The suites come from `scripts/setup`; nothing is fetched here. A machine without them
/// fails these tests, it does not skip them.
@Suite("etcd API: the client libraries' own test suites against serve --etcd")
struct ClientSuiteTests {
    @Test("a library's suite passes on serve --etcd but for the tests named with their reasons", arguments: ClientSuite.all)
    func suite(_ suite: ClientSuite) async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        try await withServer(etcd) { etcd in
            let run = try await suite.run(port: etcd.etcdPort, scratch: etcd.cli.directory)
            let shown = "\(suite.library) on serve --etcd:\n\(run.output.stdout.suffix(12_000))\(run.output.stderr.suffix(4_000))"
            #expect(run.outcomes.count == suite.count, "\(suite.library)'s suite ran \(run.outcomes.count) tests, not \(suite.count)\n\(shown)")

            let unexpected = run.outcomes.filter { $0.value != .passed && suite.notPassing[$0.key] == nil }
            #expect(unexpected.isEmpty, "\(unexpected.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n"))\n\(shown)")
            let passingNow = suite.notPassing.filter { !$0.value.isLanding && run.outcomes[$0.key] == .passed }.keys.sorted()
            #expect(passingNow.isEmpty, "these pass now: take them off \(suite.library)'s list\n\(passingNow.joined(separator: "\n"))")
            for (test, reason) in suite.notPassing.sorted(by: { $0.key < $1.key }) where reason.isLanding && run.outcomes[test] != .passed {
                withKnownIssue("\(suite.library): \(test): \(reason)", isIntermittent: true) {
                    Issue.record("\(test) \(run.outcomes[test]?.rawValue ?? "did not run")")
                }
            }
            let absent = suite.notPassing.keys.filter { run.outcomes[$0] == nil }.sorted()
            #expect(absent.isEmpty, "\(suite.library)'s suite has no such tests: \(absent.joined(separator: ", "))")
            #expect(etcd.server.isRunning)
        }
    }
}

/// One etcd client library's own test suite, run with pytest against a server's etcd API,
/// and what it shows on `serve --etcd`.
struct ClientSuite: CustomTestStringConvertible, Sendable {
    /// A test's outcome as pytest reported it.
    enum Outcome: String, Sendable {
        case passed, failed, skipped
    }

    /// Why a test of a suite does not pass on `serve --etcd`.
    enum Reason: Sendable, CustomStringConvertible {
        /// It fails on etcd as well, outside the environment it was written for.
        case failsOnEtcd(String)
        /// It reaches what discfg documents as not served (snapshots, etcd's users and roles).
        case notServed(String)
        /// It needs what is being built now: a known issue while it does not pass, and
        /// passing is no failure. Take it off the list once its work has landed.
        case notYetBuilt(String)
        /// The suite skips it in this setting.
        case skippedBySuite(String)

        /// Whether the work it needs is landing, so it may pass already.
        var isLanding: Bool {
            if case .notYetBuilt = self { true } else { false }
        }

        var description: String {
            switch self {
            case .failsOnEtcd(let why): "fails on etcd too: \(why)"
            case .notServed(let why): "not served: \(why)"
            case .notYetBuilt(let why): "not built yet: \(why)"
            case .skippedBySuite(let why): "skipped by the suite: \(why)"
            }
        }
    }

    /// The library, as its package is called.
    let library: String
    /// The directory under ``root`` the suite runs in, or nil to run in the scratch
    /// directory (a suite inside its installed package, named by `--pyargs`).
    let directory: String?
    /// The interpreter that has the library and the suite's own imports.
    let python: String
    /// pytest's arguments after the plugin's: the suite's options and which tests.
    let arguments: [String]
    /// The suite's own variables naming the server, given its port on 127.0.0.1.
    let server: @Sendable (Int) -> [String: String]
    /// How many tests the suite holds: fewer ran means some were not collected.
    let count: Int
    /// The tests that do not pass on `serve --etcd`, by pytest's id, with why. Every other
    /// test passes.
    let notPassing: [String: Reason]

    var testDescription: String { library }

    /// Where `scripts/setup` unpacks the suites.
    static let root = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/discfg/client-suites")

    /// The suite is not where `scripts/setup` puts it.
    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String { "no client library suite at \(path): run scripts/setup, which unpacks it there" }
    }

    /// Runs the suite against the etcd API on 127.0.0.1:`port`, through the plugin
    /// `Tests/Peers/etcd_client_suite.py`, and returns each test's outcome by its id.
    /// - Throws: ``Missing`` when the suite is not unpacked; a timeout after five minutes.
    func run(port: Int, scratch: URL) async throws -> (outcomes: [String: Outcome], output: ChildProcess.Output) {
        let directory = directory.map { Self.root.appendingPathComponent($0).path } ?? scratch.path
        guard FileManager.default.fileExists(atPath: directory) else { throw Missing(path: directory) }
        let outcomesFile = scratch.appendingPathComponent("\(library)-outcomes.txt")
        let settings = server(port).merging([
            "PYTHONPATH": PeerScript.path(""), "PYTHONDONTWRITEBYTECODE": "1", "ETCDCTL_API": "3",
            "ETCD_SUITE_PORT": String(port), "ETCD_SUITE_OUTCOMES": outcomesFile.path,
        ]) { $1 }
        let output = try await ChildProcess.run(
            python, ["-m", "pytest", "-p", "etcd_client_suite", "-p", "no:cacheprovider", "-q", "-rfEs", "--color=no"] + arguments,
            environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment, settings), directory: directory,
            timeout: .seconds(300)
        )
        let lines = ((try? String(contentsOf: outcomesFile, encoding: .utf8)) ?? "").split(separator: "\n")
        var outcomes: [String: Outcome] = [:]
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let outcome = Outcome(rawValue: String(parts[0])) else { continue }
            outcomes[String(parts[1])] = outcome
        }
        return (outcomes, output)
    }
}
