import DiscfgTestSupport
import Testing

/// A config's feature flags in the web console, in headless Chromium through Selenium
/// (`Tests/Browser/console_flags_check.py`) against a `discfg serve` that requires
/// tokens, while the REST API and the CLI change the same flag sets.
@Suite("Web console: the flags of a config's flag sets, and their kill switch")
struct ConsoleFlagsTests {
    @Test("in headless Chromium: every flag listed with its set, state, default, variants as written, targeting and metadata; the kill switch disables and enables a flag with a message as one change of its state only (OFREP answers DISABLED); changes from the CLI and REST shown live; a switch over a set changed meanwhile refused and the set read again; a read token's switch refused, nothing written")
    func flags() async throws {
        let check = try await BrowserCheck.run(
            "console_flags_check.py", screenshots: ["flags-view.png", "flags-refused.png"], timeout: .seconds(240)
        )
        #expect(check.failures.isEmpty, "\(check)")
    }
}
