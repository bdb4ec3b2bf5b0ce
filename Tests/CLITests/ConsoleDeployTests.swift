import DiscfgTestSupport
import Testing

/// A config's staged deployments in the web console, in headless Chromium through Selenium
/// (`Tests/Browser/console_deploy_check.py`) against a `discfg serve` that requires
/// tokens, while the CLI and the REST API move the same deployment.
@Suite("Web console: a config's staged deployments, with pause, resume and rollback")
struct ConsoleDeployTests {
    @Test("in headless Chromium: a deployment started from the CLI shows DEPLOYING at 20 % with its next step counting down, strategy, signals, who and why; pause, resume and rollback each confirmed with a message, recorded in the store with it (after= the transitions shown); a pause over REST shown live; a transition over a deployment moved meanwhile refused and read again; a read token's refused with the API's 403 message; the rolled-back deployment shown ended once the monitor records it; a short schedule's next step, bake and completion shown by the clock alone")
    func deployments() async throws {
        let check = try await BrowserCheck.run(
            "console_deploy_check.py", screenshots: ["deploy-running.png", "deploy-refused.png", "deploy-ended.png"], timeout: .seconds(240)
        )
        #expect(check.failures.isEmpty, "\(check)")
    }
}
