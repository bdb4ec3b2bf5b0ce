"""How the web console opens, in headless Chromium against a `discfg serve` the Swift
test started (ConsoleEntryTests). Prints one line per check; exits non-zero on the
first that fails.

usage: console_entry_check.py open URL DISCFG
         the server needs no token (serve on loopback before any token exists): the
         console goes straight to the configs, never showing the sign-in form; the
         first token issued in it closes the server, and then it asks for a token.
       console_entry_check.py tokens URL DISCFG TOKEN
         the server requires tokens: the console asks for one, as before.
"""

import os
import subprocess
import sys

from headless import check, chromium
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

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


def browser():
    driver = chromium()
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_SIGNIN})
    return driver


def main():
    mode, url, discfg = sys.argv[1:4]
    driver = browser()
    by_id = lambda name: driver.find_element(By.ID, name)
    script = driver.execute_script

    def until(what, condition, seconds=10):
        try:
            return WebDriverWait(driver, seconds, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException]).until(lambda _: condition())
        except TimeoutException:
            check(what, False, "(timed out)")

    def cli(*arguments, token=None):
        environment = dict(os.environ, DISCFG_STORE=url)
        if token:
            environment["DISCFG_TOKEN"] = token
        done = subprocess.run([discfg, *arguments], env=environment, capture_output=True, text=True, timeout=60)
        check(f"discfg {' '.join(arguments)}", done.returncode == 0, done.stderr)
        return done.stdout

    def sign_in(token):
        by_id("token").clear()
        by_id("token").send_keys(token)
        by_id("signin-submit").click()

    def stored_token():
        return script("return sessionStorage.getItem('discfg.token')")

    try:
        if mode == "open":
            cli("create", "before")
            driver.get(url + "/ui/")
            until("on a server that needs no token the console opens the configs", lambda: by_id("configs").is_displayed())
            until("listing the config that was there", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-config="before"]'))
            check("without ever showing the sign-in form", script("return window.__signinShown") is False)
            check("having asked once, without a token", [r["authorization"] for r in script("return window.__requests")][:1] == [None])
            check("keeping no token", stored_token() is None)
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
            token = sys.argv[4]
            driver.get(url + "/ui/")
            until("on a server that requires tokens the console asks for one", lambda: by_id("signin").is_displayed())
            check("with no error before anything is typed", by_id("signin-error").text.strip() == "", by_id("signin-error").text)
            check("showing no configs", not by_id("configs-view").is_displayed() and script("return window.__signinShown") is True)
            check("the hint says the server needs a token, not to leave it empty", "only with a token" in by_id("signin-view").text and "empty" not in by_id("signin-view").text)
            check("keeping no token", stored_token() is None)
            sign_in("")
            until("an empty token is refused with the server's reason", lambda: "bearer token" in by_id("signin-error").text)
            check("and the form stays", by_id("signin").is_displayed() and not by_id("configs-view").is_displayed())
            sign_in(token)
            until("the token opens the configs", lambda: by_id("configs").is_displayed())
            check("and is kept for this tab", stored_token() == token)
            check("with a sign-out", by_id("signout").is_displayed())
            driver.refresh()
            until("a reload signs in with the kept token", lambda: by_id("configs").is_displayed())
        else:
            check(f"mode {mode} is open or tokens", False)

        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE" and "Content Security Policy" in entry["message"]]
        check("the page broke no rule of its Content-Security-Policy", not errors, str(errors))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
