"""How the web console opens, in headless Chromium against a `discfg serve` the Swift
test started (ConsoleEntryTests). Prints one line per check; exits non-zero on the
first that fails.

usage: console_entry_check.py --url URL --discfg DISCFG --screenshots SCREENSHOTS open
         the server needs no token (serve on loopback before any token exists): the
         console goes straight to the configs, never showing the sign-in form; the
         first token issued in it closes the server, and then it asks for a token.
       console_entry_check.py --url URL --discfg DISCFG --screenshots SCREENSHOTS --token TOKEN tokens
         the server requires tokens: the console asks for one, as before.
"""

from headless import Console, DiscfgCLI, check, command_line
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

# Runs in the page before its own script, at every load: notes whether the sign-in form
# was ever shown, however briefly, and what the console asked for.
WATCH_SIGNIN = """
window.__signinShown = false;
window.__requests = [];
const originalFetch = window.fetch;
window.fetch = (input, init) => {
  const headers = (init && init.headers) || {};
  window.__requests.push({ url: String(input), authorization: headers.Authorization || null });
  return originalFetch(input, init);
};
new MutationObserver(() => {
  const view = document.getElementById('signin-view');
  if (view && !view.hidden) window.__signinShown = true;
}).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['hidden'] });
"""


def main():
    arguments = command_line("mode")
    mode, url = arguments.mode, arguments.url
    console = Console(url, arguments.screenshots, before_each_load=WATCH_SIGNIN)
    driver, by_id, until, sign_in, script = console.driver, console.by_id, console.until, console.sign_in, console.driver.execute_script
    cli = DiscfgCLI(arguments.discfg, url)

    try:
        if mode == "open":
            cli("create", "before")
            driver.get(url + "/ui/")
            until("on a server that needs no token the console opens the configs", lambda: by_id("configs").is_displayed())
            until("listing the config that was there", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-config="before"]'))
            check("without ever showing the sign-in form", script("return window.__signinShown") is False)
            check("having asked once, without a token", [r["authorization"] for r in script("return window.__requests")][:1] == [None])
            check("keeping no token", console.kept_token() is None)
            check("and offering no sign-out, having nothing to sign out of", not by_id("signout").is_displayed())

            by_id("new-config-name").send_keys("web")
            by_id("new-config-submit").click()
            until("it changes things as it reads them, with no token", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-config="web"]'))
            driver.refresh()
            until("a reload goes straight to the configs again", lambda: by_id("configs").is_displayed())
            check("still without the sign-in form", script("return window.__signinShown") is False)

            # The first token closes a server open until then (serve --auth auto): the
            # console keeps it on screen to be copied, then asks for a token.
            by_id("tokens-nav").click()
            until("the tokens view opens", lambda: by_id("new-token").is_displayed())
            Select(by_id("new-token-role")).select_by_value("admin")
            by_id("new-token-submit").click()
            until("issuing the first token shows it", lambda: by_id("issued").is_displayed() and by_id("issued-token").get_attribute("value").startswith("dcfg_"))
            token = by_id("issued-token").get_attribute("value")
            until("and says the server now takes requests only with a token", lambda: by_id("tokens-refused").is_displayed() and "only with a token" in by_id("tokens-refused").text)
            check("the new token stays on screen to be copied", by_id("issued").is_displayed() and by_id("issued-token").get_attribute("value") == token)
            by_id("issued-done").click()
            until("Done goes to the sign-in form", lambda: by_id("signin").is_displayed())
            check("saying to sign in with the token issued", "token you issued" in by_id("signin-error").text, by_id("signin-error").text)
            sign_in(token)
            until("the issued token signs in", lambda: by_id("configs").is_displayed())
            check("and the console offers to sign out now that it holds a token", by_id("signout").is_displayed())

            by_id("signout").click()
            until("signing out shows the sign-in form", lambda: by_id("signin").is_displayed())
            driver.refresh()
            until("the closed server's console asks for a token on opening", lambda: by_id("signin").is_displayed())
            check("without an error, as any server needing a token", by_id("signin-error").text.strip() == "", by_id("signin-error").text)
            check("and shows no configs", not by_id("configs-view").is_displayed())

        elif mode == "tokens":
            token = arguments.token
            driver.get(url + "/ui/")
            until("on a server that requires tokens the console asks for one", lambda: by_id("signin").is_displayed())
            check("with no error before anything is typed", by_id("signin-error").text.strip() == "", by_id("signin-error").text)
            check("showing no configs", not by_id("configs-view").is_displayed() and script("return window.__signinShown") is True)
            check("the hint says the server needs a token, not to leave it empty", "only with a token" in by_id("signin-view").text and "empty" not in by_id("signin-view").text)
            check("keeping no token", console.kept_token() is None)
            sign_in("")
            until("an empty token is refused with the server's reason", lambda: "bearer token" in by_id("signin-error").text)
            check("and the form stays", by_id("signin").is_displayed() and not by_id("configs-view").is_displayed())
            sign_in(token)
            until("the token opens the configs", lambda: by_id("configs").is_displayed())
            check("and is kept for this tab", console.kept_token() == token)
            check("with a sign-out", by_id("signout").is_displayed())
            driver.refresh()
            until("a reload signs in with the kept token", lambda: by_id("configs").is_displayed())
        else:
            check(f"mode {mode} is open or tokens", False)

        console.check_kept_to_policy()
    finally:
        console.quit()


if __name__ == "__main__":
    main()
