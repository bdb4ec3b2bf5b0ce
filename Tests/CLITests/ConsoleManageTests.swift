import DiscfgTestSupport
import Testing

/// Managing a config in the web console, in headless Chromium through Selenium
/// (`Tests/Browser/console_manage_check.py`) against a `discfg serve` that requires
/// tokens, while the REST API changes the same config.
@Suite("Web console: internals hidden, schema badges, JSON indented and diffed by pointer, change messages, the key in the address, stale errors cleared, revisions compared and rolled back")
struct ConsoleManageTests {
    @Test("in headless Chromium: /.discfg/ out of the tree and counts with a badge for a schema's keys; JSON indented and saved as stored; history by JSON Pointer and by line; a change message sent and shown; a link and a reload open the key; an error box cleared by the next action; two revisions compared; a reviewed rollback refused after a change and applied as one revision, and not offered where it would write a sealed secret as it was")
    func manage() async throws {
        let check = try await BrowserCheck.run(
            "console_manage_check.py", screenshots: ["manage-tree.png", "manage-history.png", "manage-compare.png", "manage-rollback.png"], timeout: .seconds(240)
        )
        #expect(check.failures.isEmpty, "\(check)")
    }
}
