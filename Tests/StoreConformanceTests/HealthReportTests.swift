import DiscfgConformance
import Testing

@Suite("Deployments' health reports on every store")
struct HealthReportTests {
    @Test(arguments: StoreKind.allCases)
    func reportsAreKeptPerReporterApartFromHistory(kind: StoreKind) async throws {
        try await kind.conformance.healthReports.reportsAreKeptPerReporterApartFromHistory()
    }

    @Test(arguments: StoreKind.allCases)
    func aReportForNoRunningDeploymentIsRefused(kind: StoreKind) async throws {
        try await kind.conformance.healthReports.aReportForNoRunningDeploymentIsRefused()
    }
}
