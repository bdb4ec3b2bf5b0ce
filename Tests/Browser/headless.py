"""What the console's browser checks share: the headless Chromium they drive, and how a
check reports (one line each; the first failure ends the run with a non-zero status)."""

import sys

from selenium import webdriver


def check(what, condition, detail=""):
    if not condition:
        print(f"FAIL {what} {detail}", flush=True)
        sys.exit(1)
    print(f"ok {what}", flush=True)


def chromium():
    """Headless Chromium through the system's chromedriver, keeping the page's console log."""
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,860", "--disable-gpu"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path="/usr/bin/chromedriver")
    return webdriver.Chrome(options=options, service=service)
