import DiscfgTestSupport
import Foundation
import Testing

/// etcd's own integration tests of its recipes (``EtcdRecipes``: STM in every isolation,
/// election, mutex, rwmutex, barrier, double barrier, queue, priority queue), compiled
/// once from Debian's `golang-etcd-server-dev` and run one by one against `serve --etcd`
/// on a fresh SQLite store each, as they pass against etcd. A machine without Go or the
/// package fails them, it does not skip them.
@Suite("etcd API: etcd's own recipe tests pass against it")
struct EtcdRecipeTests {
    @Test("the package declares the recipe tests this suite expects, no more and no fewer")
    func declared() throws {
        #expect(try EtcdRecipes.declaredTests() == EtcdRecipes.tests, "\(EtcdRecipes.source) changed: update EtcdRecipes.tests")
    }

    @Test(
        "every recipe test passes against serve --etcd on a fresh SQLite store: election, locks, barriers, queues, STM",
        .timeLimit(.minutes(10))
    )
    func recipes() async throws {
        let recipes = try await EtcdRecipes.compiled()
        var outcomes: [EtcdRecipes.Outcome] = []
        for name in EtcdRecipes.tests {
            let outcome = try await withServer(try await EtcdPeer.start(.sqlite)) { etcd in
                try await recipes.run(name, port: etcd.etcdPort)
            }
            outcomes.append(outcome)
        }
        let failed = outcomes.filter { !$0.passed }
        let outputs = failed.map { "\($0.name):\n\($0.output.suffix(4_000))" }.joined(separator: "\n\n")
        #expect(failed.isEmpty, "\(failed.count) of \(outcomes.count) failed: \(failed.map(\.name).joined(separator: ", "))\n\n\(outputs)")
        #expect(outcomes.filter(\.passed).map(\.name) == EtcdRecipes.tests)
    }
}
