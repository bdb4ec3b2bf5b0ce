"""What the console's browser checks share: the command line the Swift tests give them
(BrowserCheck in DiscfgTestSupport), the headless Chromium they drive and the console
page in it, the REST API and the CLI as another client of the same server, and how a
check reports (one line each; the first failure ends the run with a non-zero status)."""

import argparse
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

# The line a check ends with when the page logged no violation of its policy; the Swift
# tests look for it (BrowserCheck.keptToPolicy).
KEPT_TO_POLICY = "the page broke no rule of its Content-Security-Policy"


def check(what, condition, detail=""):
    if not condition:
        fail(what, detail)
    print(f"ok {what}", flush=True)


def fail(what, detail=""):
    print(f"FAIL {what} {detail}", flush=True)
    sys.exit(1)


def command_line(*positional):
    """The command line BrowserCheck gives every check: --url of the server, --discfg (the
    built binary), --screenshots (a folder), --token where the server requires one, then
    the check's own arguments, named `positional`."""
    parser = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="the discfg serve under test, as http://127.0.0.1:PORT")
    parser.add_argument("--discfg", required=True, help="the discfg binary, for the CLI's changes meanwhile")
    parser.add_argument("--screenshots", required=True, help="the folder screenshots are saved in")
    parser.add_argument("--token", help="a token for the server, where it requires one")
    for name in positional:
        parser.add_argument(name)
    return parser.parse_args()


def chromium():
    """Headless Chromium through the system's chromedriver, keeping the page's console log."""
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,860", "--disable-gpu"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path="/usr/bin/chromedriver")
    return webdriver.Chrome(options=options, service=service)


class Console:
    """The web console of the server at `url`, in headless Chromium. `before_each_load`,
    a script, runs in the page before the page's own at every load."""

    def __init__(self, url, screenshots, before_each_load=None):
        self.url = url
        self.screenshots = screenshots
        self.driver = chromium()
        if before_each_load:
            self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": before_each_load})

    def quit(self):
        self.driver.quit()

    def by_id(self, name):
        return self.driver.find_element(By.ID, name)

    def until(self, what, condition, seconds=10):
        """Waits until `condition()` is true and returns it; fails `what` after `seconds`."""
        # The console redraws lists as changes arrive: an element found a moment ago may
        # be gone, and the condition is simply asked again.
        try:
            return WebDriverWait(self.driver, seconds, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException]).until(lambda _: condition())
        except TimeoutException:
            check(what, False, "(timed out)")

    def click(self, selector):
        """Clicks the element `selector` finds, found and clicked in one step, asked again
        when a redraw replaced the element between finding and clicking it."""
        def attempt():
            self.driver.find_element(By.CSS_SELECTOR, selector).click()
            return True
        self.until(f"{selector} can be clicked", attempt)

    def type_into(self, name, text):
        """Replaces the text of the field with id `name`."""
        self.by_id(name).clear()
        self.by_id(name).send_keys(text)

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(self.screenshots, name))

    def open_at_sign_in(self):
        """Opens the console on a server that requires tokens, at its sign-in form."""
        self.driver.get(self.url + "/ui/")
        self.until("the sign-in form shows", lambda: self.by_id("signin").is_displayed())

    def sign_in(self, token):
        """Types `token` in the sign-in form and sends it."""
        self.type_into("token", token)
        self.by_id("signin-submit").click()

    def kept_token(self):
        """The token the console keeps for this tab (in sessionStorage), or None."""
        return self.driver.execute_script("return sessionStorage.getItem('discfg.token')")

    def check_kept_to_policy(self):
        """The last check of each script: the browser logged no Content-Security-Policy violation."""
        errors = [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE" and "Content Security Policy" in entry["message"]]
        check(KEPT_TO_POLICY, errors == [], repr(errors))


class RestAPI:
    """The server's REST API for one config, as another client with `token`."""

    def __init__(self, url, token, config):
        self.url = url
        self.token = token
        self.config = config

    def call(self, method, path, body=None, content_type=None):
        """One request: (status, parsed JSON or text)."""
        request = urllib.request.Request(self.url + path, method=method, data=body.encode() if isinstance(body, str) else body)
        request.add_header("Authorization", f"Bearer {self.token}")
        if content_type:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def request(self, method, path, body=None, content_type=None, expect=(200, 201)):
        """One request that must answer with a status of `expect`: its parsed answer."""
        status, answer = self.call(method, path, body, content_type)
        if status not in expect:
            fail(f"{method} {path}:", f"{status} {answer}")
        return answer

    def key_path(self, key, kind="keys"):
        return f"/v1/{self.config}/{kind}/{urllib.parse.quote(key.lstrip('/'))}"

    def stored(self, key):
        """The key's item as the API has it now."""
        return self.request("GET", self.key_path(key))["item"]

    def put(self, key, value, content_type="text/plain"):
        """Sets the key: its item as stored."""
        return self.request("PUT", self.key_path(key), value, content_type)["item"]


class DiscfgCLI:
    """The discfg CLI against the server, with `token` (or none), as someone else at a terminal."""

    def __init__(self, discfg, url, token=None):
        self.discfg = discfg
        self.url = url
        self.token = token

    def run(self, *arguments, token=None):
        """Runs it with `token` (by default this CLI's): (exit status, stdout, stderr)."""
        environment = dict(os.environ, DISCFG_STORE=self.url)
        environment.pop("DISCFG_TOKEN", None)
        if token or self.token:
            environment["DISCFG_TOKEN"] = token or self.token
        done = subprocess.run([self.discfg, *arguments], env=environment, capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    def __call__(self, *arguments):
        """Runs it, which must succeed: what it printed."""
        status, stdout, stderr = self.run(*arguments)
        if status != 0:
            fail(f"discfg {' '.join(arguments)}:", stderr)
        return stdout
