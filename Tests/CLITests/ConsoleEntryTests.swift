import DiscfgTestSupport
import Testing

/// How the web console opens: it asks the server with no token, and goes straight to the
/// configs where none is needed, or to the sign-in form where one is (the server's 401).
/// In headless Chromium through Selenium (`Tests/Browser/console_entry_check.py`).
@Suite("Web console: straight to the configs on a server that needs no token, a token asked for where one is needed")
struct ConsoleEntryTests {
    @Test("an open server (loopback, no token yet): the configs at once, never the sign-in form, no sign-out; the first token issued in the console is kept on screen, then the console asks for a token, without an error on the next opening")
    func openServer() async throws {
        let check = try await BrowserCheck.run("console_entry_check.py", ["open"], access: .open, timeout: .seconds(180))
        #expect(check.failures.isEmpty, "\(check)")
    }

    @Test("a server requiring tokens: the sign-in form with no error and no configs, an empty token refused with the server's reason, the token signs in and is kept on reload")
    func tokenServer() async throws {
        let check = try await BrowserCheck.run("console_entry_check.py", ["tokens"], access: .token(role: "read"), timeout: .seconds(180))
        #expect(check.failures.isEmpty, "\(check)")
    }
}
