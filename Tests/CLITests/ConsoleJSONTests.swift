import DiscfgTestSupport
import Testing

/// JSON values in the web console, in headless Chromium through Selenium
/// (`Tests/Browser/console_json_check.py`) against a `discfg serve` that requires tokens,
/// while the REST API changes the same keys.
@Suite("Web console: JSON edits as merge patches, schema violations beside the editor, a key's schemas")
struct ConsoleJSONTests {
    @Test("in headless Chromium: a merge-patch edit lands over another member's change and both stay; the same member's change opens the conflict view; a 422 lists each violation beside the editor; a key names the schemas that check it; bad JSON is refused with its line and column; a text value is saved by PUT with If-Match")
    func jsonEdits() async throws {
        let check = try await BrowserCheck.run("console_json_check.py", screenshots: ["json-conflict.png", "json-violations.png"], timeout: .seconds(180))
        #expect(check.failures.isEmpty, "\(check)")
    }
}
