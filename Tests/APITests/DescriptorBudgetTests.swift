import DiscfgNetwork
@testable import DiscfgAPI
import Testing

/// The REST API and the etcd API share the process's descriptors, with some kept apart
/// for everything else. (A server under `ulimit -n 512` and 600 idle etcd connections is
/// in `EtcdHoldTests`.)
@Suite("serve: one descriptor budget for both APIs")
struct DescriptorBudgetTests {
    @Test("connections of both APIs, the REST API's refusals included, fit the limit less the reserve", arguments: [160, 256, 512, 1024, 4096, 65_536, 1_048_576])
    func fits(descriptors: Int) {
        for requested in [1, 100, 4096, 1_000_000] {
            let budget = DescriptorBudget(descriptors: descriptors, requested: requested, servesEtcd: true)
            #expect(budget.rest >= 1 && budget.etcd >= 1)
            #expect(budget.rest <= requested && budget.etcd <= requested)
            let used = ConnectionCap.acceptLimit(for: budget.rest) + budget.etcd + 1
            #expect(used <= max(descriptors - DescriptorBudget.reservedDescriptors, 2) || budget.rest == 1, "\(descriptors) \(requested): \(budget)")
            #expect(budget.lowered == (budget.rest < requested || budget.etcd < requested))
        }
    }

    @Test("under ulimit -n 1024 neither API can take the other's half; with room, --max-connections is kept")
    func shares() {
        let small = DescriptorBudget(descriptors: 1024, requested: 4096, servesEtcd: true)
        #expect(small.etcd == 447)
        #expect(ConnectionCap.acceptLimit(for: small.rest) <= 448)
        #expect(small.lowered)
        let large = DescriptorBudget(descriptors: 1 << 20, requested: 4096, servesEtcd: true)
        #expect(large.rest == 4096 && large.etcd == 4096 && !large.lowered)
        let restOnly = DescriptorBudget(descriptors: 1024, requested: 4096, servesEtcd: false)
        #expect(restOnly.etcd == 0)
        #expect(ConnectionCap.acceptLimit(for: restOnly.rest) <= 896)
    }
}
