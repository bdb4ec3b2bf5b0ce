import DiscfgConfiguration
import Logging
import ServiceLifecycle

/// Runs `body` while `provider` runs in a service group (following changes), then shuts
/// the group down.
func withRunning(_ provider: DiscfgProvider, _ body: () async throws -> Void) async throws {
    var logger = Logger(label: "discfg-provider-test")
    logger.logLevel = .critical
    let group = ServiceGroup(services: [provider], logger: logger)
    let running = Task { try await group.run() }
    do {
        try await body()
    } catch {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        throw error
    }
    await group.triggerGracefulShutdown()
    try await running.value
}
