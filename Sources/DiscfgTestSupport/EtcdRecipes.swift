import Foundation

/// etcd's own integration tests of its recipes — STM in every isolation, election,
/// mutex, rwmutex, barrier, double barrier, queue and priority queue — as Debian's
/// `golang-etcd-server-dev` ships them (etcd 3.4's `go.etcd.io/etcd/integration`), run
/// against any server speaking the etcd API. Their files are copied at test time beside
/// `Tests/Peers/etcd_recipes/cluster.go`, which gives them the cluster they build (clients
/// to the endpoint in `ETCD_RECIPES_ENDPOINTS`), and compiled once per test process
/// with Go (`golang-go`); `scripts/setup` installs both. A machine without them fails
/// the tests that use them, it does not skip them.
///
/// Each test assumes an empty cluster with a fresh history (`TestMutexWaitsOnCurrentHolder`
/// watches its prefix from revision 1, and a compaction by one would cut the history of
/// the next), so each runs alone, by the compiled binary, against its own fresh server.
///
/// ```swift
/// let recipes = try await EtcdRecipes.compiled()
/// let outcome = try await recipes.run("TestElectionWait", port: etcd.etcdPort)
/// #expect(outcome.passed, "\(outcome.output)")
/// ```
public struct EtcdRecipes: Sendable {
    /// Where Debian's package puts etcd's integration tests.
    public static let source = "/usr/share/gocode/src/go.etcd.io/etcd/integration"
    /// The recipe tests' files in ``source``.
    public static let files = [
        "v3_barrier_test.go", "v3_double_barrier_test.go", "v3_election_test.go", "v3_lock_test.go", "v3_queue_test.go", "v3_stm_test.go",
    ]
    /// Every test the files hold, in their order.
    public static let tests = [
        "TestBarrierSingleNode", "TestBarrierMultiNode",
        "TestDoubleBarrier", "TestDoubleBarrierFailover",
        "TestElectionWait", "TestElectionFailover", "TestElectionSessionRecampaign", "TestElectionOnPrefixOfExistingKey",
        "TestElectionOnSessionRestart", "TestElectionObserveCompacted",
        "TestMutexSingleNode", "TestMutexMultiNode", "TestMutexSessionRelock", "TestMutexWaitsOnCurrentHolder",
        "TestRWMutexSingleNode", "TestRWMutexMultiNode",
        "TestQueueOneReaderOneWriter", "TestQueueManyReaderOneWriter", "TestQueueOneReaderManyWriter", "TestQueueManyReaderManyWriter",
        "TestPrQueueOneReaderOneWriter", "TestPrQueueManyReaderManyWriter",
        "TestSTMConflict", "TestSTMPutNewKey", "TestSTMAbort", "TestSTMSerialize", "TestSTMApplyOnConcurrentDeletion",
        "TestSTMSerializableSnapshotPut",
    ]

    /// Go or the package is missing, or the tests did not compile: what to install, or
    /// what the compiler said.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// One test's run: whether `go test -v` said it passed, and all it printed.
    public struct Outcome: Sendable {
        public let name: String
        public let passed: Bool
        public let output: String
    }

    /// The compiled test binary.
    public let binary: String
    /// How long the compilation took (nothing cached the first time on a machine).
    public let compileTime: Duration

    /// The tests compiled, once per test process: in `.build/etcd-recipes`, where Go's
    /// cache stays between runs (no network: `GOPROXY=off`, GOPATH mode over Debian's
    /// `/usr/share/gocode`).
    public static func compiled() async throws -> EtcdRecipes {
        try await compilation.value
    }

    private static let compilation = Task { try await compile() }

    /// The `Test…` functions the package's files declare, in their order.
    public static func declaredTests() throws -> [String] {
        try files.flatMap { file in
            try String(contentsOfFile: "\(source)/\(file)", encoding: .utf8).split(separator: "\n")
                .filter { $0.hasPrefix("func Test") }
                .map { String($0.dropFirst(5).prefix { $0 != "(" }) }
        }
    }

    private static func compile() async throws -> EtcdRecipes {
        guard let go = RealEtcd.executable("go") else {
            throw Unavailable(description: "go is not installed: etcd's recipe tests are Go. Install golang-go (scripts/setup does).")
        }
        guard FileManager.default.fileExists(atPath: "\(source)/v3_stm_test.go") else {
            throw Unavailable(description: "\(source) is missing: install golang-etcd-server-dev (scripts/setup does).")
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
        let work = root.appendingPathComponent(".build/etcd-recipes")
        let package = work.appendingPathComponent("gopath/src/etcdrecipes")
        let manager = FileManager.default
        try? manager.removeItem(at: package)
        try manager.createDirectory(at: package, withIntermediateDirectories: true)
        try manager.copyItem(atPath: PeerScript.path("etcd_recipes/cluster.go"), toPath: package.appendingPathComponent("cluster.go").path)
        for file in files {
            try manager.copyItem(atPath: "\(source)/\(file)", toPath: package.appendingPathComponent(file).path)
        }
        let binary = work.appendingPathComponent("recipes.test").path
        let environment = ChildProcess.environment([
            "GO111MODULE": "off", "GOPATH": "\(work.path)/gopath:/usr/share/gocode", "GOCACHE": "\(work.path)/gocache",
            "GOPROXY": "off", "GOFLAGS": "", "CGO_ENABLED": "0", "HOME": work.path,
        ])
        let start = ContinuousClock.now
        let built = try await ChildProcess.run(
            go, ["test", "-c", "-o", binary, "."], environment: environment, directory: package.path, timeout: .seconds(600)
        )
        guard built.termination == .exited(0) else {
            throw Unavailable(description: "go test -c of etcd's recipe tests: \(built.termination?.description ?? "running")\n\(built.logs)")
        }
        return EtcdRecipes(binary: binary, compileTime: ContinuousClock.now - start)
    }

    /// Runs one test against the etcd API on 127.0.0.1:`port`.
    public func run(_ name: String, port: Int) async throws -> Outcome {
        let output = try await ChildProcess.run(
            binary, ["-test.run", "^\(name)$", "-test.v", "-test.count=1", "-test.timeout", "60s"],
            environment: ChildProcess.environment(["ETCD_RECIPES_ENDPOINTS": "127.0.0.1:\(port)"]), timeout: .seconds(90)
        )
        let lines = output.stdoutLines
        let passed = output.termination == .exited(0) && lines.contains { $0.hasPrefix("--- PASS: \(name) (") }
            && !lines.contains { $0.hasPrefix("--- FAIL") || $0.hasPrefix("--- SKIP") }
        return Outcome(name: name, passed: passed, output: output.logs)
    }
}
