"""The web console in a real browser: headless Chromium driven by Selenium against a
`discfg serve` the Swift test started with tokens required. The CLI changes keys
through the same server meanwhile, as another person would. Prints one line per
scenario; exits non-zero on the first that fails. Screenshots of each main view go to
SCREENSHOTS.

usage: console_check.py URL TOKEN DISCFG SCREENSHOTS
"""

import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

URL, TOKEN, DISCFG, SCREENSHOTS = sys.argv[1:5]


def check(what, condition, detail=""):
    if not condition:
        print(f"FAIL {what} {detail}", flush=True)
        sys.exit(1)
    print(f"ok {what}", flush=True)


def cli(*arguments):
    """Runs the discfg CLI against the server, as someone else at a terminal."""
    environment = dict(os.environ, DISCFG_STORE=URL, DISCFG_TOKEN=TOKEN)
    done = subprocess.run([DISCFG, *arguments], env=environment, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        print(f"FAIL discfg {' '.join(arguments)}: {done.stderr}", flush=True)
        sys.exit(1)
    return done.stdout


def browser():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,860", "--disable-gpu"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path="/usr/bin/chromedriver")
    return webdriver.Chrome(options=options, service=service)


def main():
    driver = browser()
    wait = WebDriverWait(driver, 10, poll_frequency=0.05)
    by_id = lambda name: driver.find_element(By.ID, name)

    def until(what, condition, seconds=10):
        try:
            return WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda _: condition())
        except TimeoutException:
            check(what, False, "(timed out)")

    def shot(name):
        driver.save_screenshot(os.path.join(SCREENSHOTS, name))

    def sign_in(token):
        by_id("token").clear()
        by_id("token").send_keys(token)
        by_id("signin-submit").click()

    try:
        driver.get(URL + "/ui/")
        until("the sign-in form shows", lambda: by_id("signin").is_displayed())
        sign_in("wrong-token")
        until("a wrong token is refused with the API's message", lambda: by_id("signin-error").text.strip() != "")
        check("after a refusal the console stays at sign-in and keeps no token",
              by_id("signin").is_displayed() and driver.execute_script("return sessionStorage.getItem('discfg.token')") is None)
        shot("signin-refused.png")

        sign_in(TOKEN)
        until("the right token opens the list of configs", lambda: by_id("configs").is_displayed())
        check("the token is kept in sessionStorage, not a cookie",
              driver.execute_script("return sessionStorage.getItem('discfg.token')") == TOKEN and driver.get_cookies() == [])

        by_id("new-config-name").send_keys("web")
        by_id("new-config-submit").click()
        until("a config created in the console is listed", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-config="web"]'))
        cli("set", "web", "/db/port", "5432")
        driver.find_element(By.CSS_SELECTOR, '[data-config="web"]').click()
        until("opening it shows its keys", lambda: by_id("config-title").text == "web" and driver.find_elements(By.CSS_SELECTOR, '[data-key="/db/port"]'))
        until("and follows it live", lambda: by_id("live-status").text == "Live")

        by_id("new-key").click()
        until("New key opens an editor", lambda: by_id("editor").is_displayed())
        by_id("key-path").clear()
        by_id("key-path").send_keys("/db/host")
        by_id("value").send_keys("h1")
        by_id("save").click()
        until("a key created in the console is in the tree", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-key="/db/host"]'))
        check("and in the store", cli("get", "web", "/db/host") == "h1\n")

        # JSON is checked before it is sent.
        by_id("new-key").click()
        by_id("key-path").clear()
        by_id("key-path").send_keys("/app.json")
        by_id("content-type").clear()
        by_id("content-type").send_keys("application/json")
        by_id("value").send_keys('{"broken": ')
        by_id("save").click()
        until("JSON that does not parse is refused before saving", lambda: by_id("editor-message").text.strip() != "")
        check("and nothing was saved", "not found" in subprocess.run([DISCFG, "get", "web", "/app.json"], env=dict(os.environ, DISCFG_STORE=URL, DISCFG_TOKEN=TOKEN), capture_output=True, text=True).stderr.lower())

        # A change by someone else shows within a second.
        started = time.monotonic()
        cli("set", "web", "/live/flag", "on")
        until("a key set with the CLI appears in the open console within 1 s",
              lambda: driver.find_elements(By.CSS_SELECTOR, '[data-key="/live/flag"]'), seconds=1 + (time.monotonic() - started))
        print(f"   (appeared {time.monotonic() - started:.2f} s after the CLI started)", flush=True)
        cli("set", "web", "/db/port", "6543")
        until("a key changed with the CLI is marked changed", lambda: "changed" in driver.find_element(By.CSS_SELECTOR, '[data-key="/db/port"]').get_attribute("class"))

        # Values are text, never markup.
        attack = '<img src=x onerror="window.__xss=1">'
        cli("set", "web", "/xss", attack)
        until("the XSS key arrives", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-key="/xss"]'))
        # The refused JSON is still unsaved in the editor: the console asks before
        # dropping it, and a second click on the key discards it.
        driver.find_element(By.CSS_SELECTOR, '[data-key="/xss"]').click()
        until("leaving unsaved changes asks first", lambda: "unsaved" in by_id("editor-message").text)
        driver.find_element(By.CSS_SELECTOR, '[data-key="/xss"]').click()
        until("a value of markup shows as its text", lambda: by_id("value").get_attribute("value") == attack)
        check("and nothing of it ran or became an element",
              driver.execute_script("return window.__xss === undefined && document.querySelectorAll('img[src=x]').length === 0"))

        # Editing while someone else changes the key: shown at once, then both values.
        driver.find_element(By.CSS_SELECTOR, '[data-key="/db/host"]').click()
        until("the key opens in the editor", lambda: by_id("value").get_attribute("value") == "h1" and by_id("key-path").get_attribute("value") == "/db/host")
        shot("config.png")
        by_id("value").clear()
        by_id("value").send_keys("mine")
        cli("set", "web", "/db/host", "theirs")
        until("a key being edited that changes underneath is flagged", lambda: by_id("changed-notice").is_displayed())
        by_id("save").click()
        until("saving over it shows the conflict, both values side by side",
              lambda: by_id("conflict").is_displayed() and by_id("conflict-mine").text == "mine" and by_id("conflict-theirs").text == "theirs")
        check("and nothing was overwritten", cli("get", "web", "/db/host") == "theirs\n")
        shot("conflict.png")
        by_id("conflict-reapply").click()
        until("re-applying saves mine over theirs", lambda: by_id("conflict").get_attribute("hidden") is not None)
        check("as a new change: theirs stays in history", cli("get", "web", "/db/host") == "mine\n" and "theirs" in cli("history", "web", "/db/host"))

        by_id("back").click()
        until("back to the list of configs", lambda: by_id("configs").is_displayed())
        shot("configs.png")
        driver.set_window_size(360, 800)
        driver.find_element(By.CSS_SELECTOR, '[data-config="web"]').click()
        until("the config opens at 360 px wide", lambda: by_id("config-title").text == "web")
        check("with nothing wider than the screen", driver.execute_script("return document.documentElement.scrollWidth <= 360"))
        shot("narrow.png")

        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE" and "Content Security Policy" in entry["message"]]
        check("the page broke no rule of its Content-Security-Policy", errors == [], repr(errors))
    finally:
        driver.quit()


main()
