import DiscfgConformance
import Testing

@Suite("Staged deployments on every store")
struct DeploymentTests {
    @Test(arguments: StoreKind.allCases)
    func aStartStagesTheCandidateAndLeavesTheLiveKeys(kind: StoreKind) async throws {
        try await kind.conformance.deployments.aStartStagesTheCandidateAndLeavesTheLiveKeys()
    }

    @Test(arguments: StoreKind.allCases)
    func writesUnderARunningDeploymentAreRefusedNamingIt(kind: StoreKind) async throws {
        try await kind.conformance.deployments.writesUnderARunningDeploymentAreRefusedNamingIt()
    }

    @Test(arguments: StoreKind.allCases)
    func oneDeploymentRunsOnAPrefixAtATime(kind: StoreKind) async throws {
        try await kind.conformance.deployments.oneDeploymentRunsOnAPrefixAtATime()
    }

    @Test(arguments: StoreKind.allCases)
    func completeMakesTheCandidateLiveAndRevertPutsTheStableBack(kind: StoreKind) async throws {
        try await kind.conformance.deployments.completeMakesTheCandidateLiveAndRevertPutsTheStableBack()
    }

    @Test(arguments: StoreKind.allCases)
    func aRevertOverALaterChangeIsRefused(kind: StoreKind) async throws {
        try await kind.conformance.deployments.aRevertOverALaterChangeIsRefused()
    }

    @Test(arguments: StoreKind.allCases)
    func aRollbackDropsTheCandidateAndFreesThePrefix(kind: StoreKind) async throws {
        try await kind.conformance.deployments.aRollbackDropsTheCandidateAndFreesThePrefix()
    }

    @Test(arguments: StoreKind.allCases)
    func anExportWithDeploymentsImportsWithoutThem(kind: StoreKind) async throws {
        try await kind.conformance.deployments.anExportWithDeploymentsImportsWithoutThem()
    }

    @Test(arguments: StoreKind.allCases)
    func aCandidateThatBreaksASchemaIsRefused(kind: StoreKind) async throws {
        try await kind.conformance.deployments.aCandidateThatBreaksASchemaIsRefused()
    }
}
