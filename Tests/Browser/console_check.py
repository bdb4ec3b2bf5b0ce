"""The web console in a real browser: headless Chromium driven by Selenium against a
`discfg serve` the Swift test started with tokens required. The CLI changes keys
through the same server meanwhile, as another person would. Prints one line per
scenario; exits non-zero on the first that fails. Screenshots of each main view go to
the screenshots folder.

usage: console_check.py --url URL --token TOKEN --discfg DISCFG --screenshots SCREENSHOTS
"""

import json
import os
import tempfile
import time

from headless import Console, DiscfgCLI, check, command_line
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

ARGUMENTS = command_line()
URL, TOKEN = ARGUMENTS.url, ARGUMENTS.token
cli = DiscfgCLI(ARGUMENTS.discfg, URL, TOKEN)


def exported(config):
    """The config's keys as the CLI exports them: {key: (value, contentType)}."""
    document = json.loads(cli("export", config, "--to", "json"))
    return {item["key"]: (item["value"], item.get("contentType")) for item in document["items"]}


def main():
    console = Console(URL, ARGUMENTS.screenshots)
    driver, by_id, until, click, shot, type_into = console.driver, console.by_id, console.until, console.click, console.shot, console.type_into

    try:
        console.open_at_sign_in()
        console.sign_in("wrong-token")
        until("a wrong token is refused with the API's message", lambda: by_id("signin-error").text.strip() != "")
        check("after a refusal the console stays at sign-in and keeps no token",
              by_id("signin").is_displayed() and console.kept_token() is None)
        shot("signin-refused.png")

        console.sign_in(TOKEN)
        until("the right token opens the list of configs", lambda: by_id("configs").is_displayed())
        check("the token is kept in sessionStorage, not a cookie",
              console.kept_token() == TOKEN and driver.get_cookies() == [])

        by_id("new-config-name").send_keys("web")
        by_id("new-config-submit").click()
        until("a config created in the console is listed", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-config="web"]'))
        cli("set", "web", "/db/port", "5432")
        click('[data-config="web"]')
        until("opening it shows its keys", lambda: by_id("config-title").text == "web" and driver.find_elements(By.CSS_SELECTOR, '[data-key="/db/port"]'))
        until("and follows it live", lambda: by_id("live-status").text == "Live")

        by_id("new-key").click()
        until("New key opens an editor", lambda: by_id("editor").is_displayed())
        type_into("key-path", "/db/host")
        by_id("value").send_keys("h1")
        by_id("save").click()
        until("a key created in the console is in the tree", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-key="/db/host"]'))
        check("and in the store", cli("get", "web", "/db/host") == "h1\n")

        # JSON is checked before it is sent.
        by_id("new-key").click()
        type_into("key-path", "/app.json")
        type_into("content-type", "application/json")
        by_id("value").send_keys('{"broken": ')
        by_id("save").click()
        until("JSON that does not parse is refused before saving", lambda: by_id("editor-message").text.strip() != "")
        check("and nothing was saved", "not found" in cli.run("get", "web", "/app.json")[2].lower())

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
        click('[data-key="/xss"]')
        until("leaving unsaved changes asks first", lambda: "unsaved" in by_id("editor-message").text)
        click('[data-key="/xss"]')
        until("a value of markup shows as its text", lambda: by_id("value").get_attribute("value") == attack)
        check("and nothing of it ran or became an element",
              driver.execute_script("return window.__xss === undefined && document.querySelectorAll('img[src=x]').length === 0"))

        # Editing while someone else changes the key: shown at once, then both values.
        click('[data-key="/db/host"]')
        until("the key opens in the editor", lambda: by_id("value").get_attribute("value") == "h1" and by_id("key-path").get_attribute("value") == "/db/host")
        shot("config.png")
        type_into("value", "mine")
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

        # History: a timeline newest first, a line diff between any two, restore.
        by_id("history-toggle").click()
        entries = lambda: driver.find_elements(By.CSS_SELECTOR, "#history-list > li[data-revision]")
        # textContent: each line's words for screen readers ("added: ") are in it too.
        diff_lines = lambda: [line.get_attribute("textContent") for line in driver.find_elements(By.CSS_SELECTOR, "#diff-lines .diff-line")]
        until("the key's history opens as a timeline", lambda: len(entries()) == 3)
        values = [entry.find_element(By.CSS_SELECTOR, "pre").text for entry in entries()]
        revisions = [int(entry.get_attribute("data-revision")) for entry in entries()]
        check("newest first, every value it had", values == ["mine", "theirs", "h1"] and revisions == sorted(revisions, reverse=True), repr((values, revisions)))
        first = revisions[2]
        click(f'input[data-side="a"][value="{first}"]')
        until("any two revisions are compared line by line",
              lambda: diff_lines() == ["- removed: h1", "+ added: mine"])
        click(f'button[data-restore="{first}"]')
        until("restoring a past value shows it in the editor", lambda: by_id("value").get_attribute("value") == "h1")
        check("and saves it as a new change, history kept", cli("get", "web", "/db/host") == "h1\n")
        check("the change says it restored that revision", f"restore /db/host to revision {first}" in cli("history", "web", "/db/host"), cli("history", "web", "/db/host"))
        until("the timeline shows the restore on top", lambda: len(entries()) == 4 and entries()[0].find_element(By.CSS_SELECTOR, "pre").text == "h1")

        # The diff itself, on 3,000 random pairs in this browser: it rebuilds both values
        # and is as short as the longest common subsequence allows.
        failures = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import(new URL('diff.js', location.href).href).then(({ diffLines }) => {
              let seed = 7;
              const random = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
              const text = () => Array.from({ length: random(12) }, () => 'abcd'[random(4)]).join('\\n');
              const lcs = (x, y) => {
                const row = new Array(y.length + 1).fill(0);
                for (const a of x) { let previous = 0; for (let j = 1; j <= y.length; j += 1) { const kept = row[j]; row[j] = a === y[j - 1] ? previous + 1 : Math.max(row[j], row[j - 1]); previous = kept; } }
                return row[y.length];
              };
              const failed = [];
              for (let i = 0; i < 3000; i += 1) {
                const before = text(); const after = text();
                const ops = diffLines(before, after);
                const rebuilt = (skip) => ops.filter((op) => op.type !== skip).map((op) => op.text).join('\\n');
                const x = before.split('\\n'); const y = after.split('\\n');
                const edits = ops.filter((op) => op.type !== 'same').length;
                if (rebuilt('add') !== before || rebuilt('del') !== after || edits !== x.length + y.length - 2 * lcs(x, y)) failed.push([before, after]);
              }
              done(failed.slice(0, 3));
            }).catch((error) => done(String(error)));
        """)
        check("the line diff is right and shortest on 3,000 random pairs", failures == [], repr(failures))

        # A multi-line value: the diff keeps the unchanged lines and marks the rest.
        cli("set", "web", "/app/conf", "host=a\nport=1\nmode=x\nend")
        cli("set", "web", "/app/conf", "host=a\nport=2\nmode=x\nend\nextra=y")
        until("a new key arrives", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-key="/app/conf"]'))
        click('[data-key="/app/conf"]')
        until("another key's history follows the editor", lambda: len(entries()) == 2)
        until("the newest change is compared with the one before it by default",
              lambda: diff_lines()
              == ["  host=a", "- removed: port=1", "+ added: port=2", "  mode=x", "  end", "+ added: extra=y"])
        check("with a summary", "2 lines added, 1 removed" in by_id("diff-summary").text, by_id("diff-summary").text)
        driver.execute_script("arguments[0].scrollIntoView()", by_id("history"))
        shot("history.png")

        # The whole config as it was at a revision, read-only.
        by_id("at-revision-toggle").click()
        for bad, why in (("-1", "a negative revision"), ("18446744073709551616", "2^64"), ("1.5", "a fraction")):
            type_into("at-revision", bad)
            by_id("at-revision-submit").click()
            until(f"{why} is refused before it is sent", lambda: "whole number" in by_id("at-revision-error").text)
        type_into("at-revision", "9223372036854775807")
        by_id("at-revision-submit").click()
        until("a revision past the config's is refused with the API's message", lambda: by_id("at-revision-error").text.strip() != "" and "whole number" not in by_id("at-revision-error").text)
        type_into("at-revision", str(first))
        by_id("at-revision-submit").click()
        until("the config at a past revision opens", lambda: by_id("snapshot").is_displayed())
        at = lambda key: [pre.text for pre in driver.find_elements(By.CSS_SELECTOR, f'#snapshot-keys pre[data-snapshot-key="{key}"]')]
        check("with the values it had then", at("/db/host") == ["h1"] and at("/db/port") == ["5432"], repr((at("/db/host"), at("/db/port"))))
        check("and without the keys made later", at("/xss") == [] and at("/live/flag") == [] and at("/app/conf") == [])
        check("read-only: no editor beside it", not by_id("value").is_displayed())
        shot("revision.png")
        by_id("snapshot-close").click()
        until("closing it returns to the keys", lambda: by_id("keys").is_displayed())

        # Export by download, import by upload, in every format.
        downloads = tempfile.mkdtemp(prefix="discfg-downloads-")
        driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
        by_id("transfer-toggle").click()
        for format in ("json", "yaml", "env"):
            Select(by_id("export-format")).select_by_value(format)
            by_id("export-download").click()
            path = os.path.join(downloads, f"web.{format}")
            until(f"export downloads web.{format}", lambda: os.path.exists(path) and os.path.getsize(path) > 0)
        with open(os.path.join(downloads, "web.json")) as file:
            document = json.load(file)
        check("the JSON file is the config's export", {item["key"]: item["value"] for item in document["items"]} == {key: value for key, (value, _) in exported("web").items()})
        with open(os.path.join(downloads, "web.env")) as file:
            check("the env file names keys as variables", "DB_HOST=h1" in file.read())

        cli("create", "copy")
        cli("set", "copy", "/extra", "only here")
        bad_file = os.path.join(downloads, "broken.json")
        with open(bad_file, "w") as file:
            file.write('{"items": [')
        by_id("back").click()
        until("the new config is listed", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-config="copy"]'))
        click('[data-config="copy"]')
        until("it opens", lambda: by_id("config-title").text == "copy" and driver.find_elements(By.CSS_SELECTOR, '[data-key="/extra"]'))
        by_id("transfer-toggle").click()
        by_id("import-file").send_keys(bad_file)
        by_id("import-submit").click()
        until("a file that does not parse is refused with the API's message", lambda: by_id("transfer-error").text.strip() != "")
        check("and changes nothing", exported("copy") == {"/extra": ("only here", None)}, repr(exported("copy")))
        for format in ("env", "yaml", "json"):
            by_id("import-file").send_keys(os.path.join(downloads, f"web.{format}"))
            by_id("import-submit").click()
            until(f"importing web.{format} reports what changed", lambda: by_id("transfer-status").text.startswith(f"Imported web.{format}"))
            print(f"   ({by_id('transfer-status').text})", flush=True)
        copied, original = exported("copy"), exported("web")
        check("env makes a key of each variable", copied.get("/DB_HOST", (None,))[0] == "h1", repr(copied))
        check("the round trip loses nothing", {key: copied.get(key) for key in original} == original and "/extra" in copied, repr(copied))
        until("the imported keys show in the tree", lambda: driver.find_elements(By.CSS_SELECTOR, '#keys [data-key="/xss"]'))
        by_id("import-file").send_keys(os.path.join(downloads, "web.json"))
        by_id("import-replace").click()
        by_id("import-replace-confirm").send_keys("web")
        shot("transfer.png")
        by_id("import-submit").click()
        until("replacing needs the config's name typed exactly", lambda: "exactly" in by_id("transfer-error").text)
        check("and nothing was deleted before it", "/extra" in exported("copy"))
        type_into("import-replace-confirm", "copy")
        by_id("import-submit").click()
        until("replacing deletes the keys the file lacks", lambda: "/extra" not in exported("copy") and "/DB_HOST" not in exported("copy"))
        check("and leaves the config equal to the file", exported("copy") == exported("web"))
        until("the deleted key leaves the tree", lambda: not driver.find_elements(By.CSS_SELECTOR, '#keys [data-key="/extra"]'))

        # Secrets: masked, explained, revealed only with the config's key file, in this tab.
        keys = tempfile.mkdtemp(prefix="discfg-keys-")
        right, wrong = os.path.join(keys, "web.key"), os.path.join(keys, "other.key")
        cli("key", "init", right)
        cli("key", "init", wrong)
        cli("update", "web", "--encryption", f"file://{right}")
        cli("set", "web", "/db/password", "s3cret pass", "--secret")
        by_id("back").click()
        until("back to the configs", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-config="web"]'))
        click('[data-config="web"]')
        until("the secret is in the tree", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-key="/db/password"]'))
        click('[data-key="/db/password"]')
        until("a secret shows masked and explained", lambda: by_id("secret").is_displayed() and "key file" in by_id("secret-note").text and by_id("secret-key-field").is_displayed())
        check("never as its value, and not editable", "s3cret" not in driver.page_source and not by_id("value").is_displayed() and not by_id("save").is_displayed())
        shot("secret.png")
        by_id("secret-key").send_keys(os.path.join(downloads, "web.json"))
        until("a file that is not a key file is named as such", lambda: "not a discfg key file" in by_id("secret-error").text)
        by_id("secret-key").send_keys(wrong)
        until("another key file reveals nothing", lambda: "does not open" in by_id("secret-error").text)
        check("and the value stays hidden", "s3cret" not in driver.page_source)
        until("the key file may be chosen again", lambda: by_id("secret-key-field").is_displayed())
        by_id("secret-key").send_keys(right)
        until("the config's key file reveals it, in the browser", lambda: by_id("secret-value").text == "s3cret pass")
        by_id("secret-hide").click()
        check("hiding it takes it off the page", "s3cret" not in driver.page_source)
        cli("key", "rotate", "web")
        cli("set", "web", "/db/token", "t0ken", "--secret")
        until("a secret sealed under a newer data key arrives", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-key="/db/token"]'))
        click('[data-key="/db/token"]')
        until("with the key file given, another secret reveals with one button", lambda: by_id("secret-reveal").is_displayed())
        by_id("secret-reveal").click()
        until("even under a data key made after the console read the config", lambda: by_id("secret-value").text == "t0ken")
        click('[data-key="/db/password"]')
        until("the next secret opens masked again", lambda: by_id("secret-reveal").is_displayed() and not by_id("secret-value").is_displayed())
        by_id("history-toggle").click()
        until("a secret's history is masked too", lambda: entries() and entries()[0].find_element(By.CSS_SELECTOR, "pre").text == "(secret)")
        check("with nothing of it on the page", "s3cret" not in driver.page_source)

        by_id("back").click()
        until("back to the list of configs", lambda: by_id("configs").is_displayed())
        shot("configs.png")
        check("each config shows how many keys it has", "keys" in driver.find_element(By.CSS_SELECTOR, '[data-config="web"]').text, driver.find_element(By.CSS_SELECTOR, '[data-config="web"]').text)
        web_keys = len(exported("web"))
        check("counted right", f"{web_keys} keys" in driver.find_element(By.CSS_SELECTOR, '[data-config="web"]').text)

        # Tokens: an admin lists, issues (shown once) and revokes them.
        by_id("tokens-nav").click()
        rows = lambda: driver.find_elements(By.CSS_SELECTOR, "#tokens > li[data-token]")
        until("an admin sees the tokens", lambda: len(rows()) == 1)
        check("and which one this tab signed in with", "signed in with it" in rows()[0].text)
        Select(by_id("new-token-role")).select_by_value("read")
        by_id("new-token-configs").send_keys("web")
        by_id("new-token-description").send_keys("console <b>test</b>")
        by_id("new-token-submit").click()
        until("a new token is shown once", lambda: by_id("issued").is_displayed() and by_id("issued-token").get_attribute("value").startswith("dcfg_"))
        issued = by_id("issued-token").get_attribute("value")
        issued_id = issued[5:17]
        until("and listed by its record", lambda: len(rows()) == 2)
        check("its description as text", driver.find_element(By.CSS_SELECTOR, f'li[data-token="{issued_id}"]').text.count("console <b>test</b>") == 1)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", by_id("issued"))
        shot("tokens.png")
        status, out, _ = cli.run("get", "web", "/db/host", token=issued)
        check("the new token works with its role", status == 0 and out == "h1\n")
        status, _, err = cli.run("set", "web", "/db/host", "nope", token=issued)
        check("and no further", status != 0 and cli("get", "web", "/db/host") == "h1\n", err)
        by_id("issued-done").click()
        check("Done takes it off the page", issued not in driver.page_source)

        by_id("signout").click()
        console.sign_in(issued)
        until("the read token signs in", lambda: by_id("configs").is_displayed() and driver.find_elements(By.CSS_SELECTOR, '[data-config="web"]'))
        check("and sees only its config", not driver.find_elements(By.CSS_SELECTOR, '[data-config="copy"]'))
        by_id("tokens-nav").click()
        until("managing tokens is explained, not offered, to a token that may not", lambda: by_id("tokens-refused").is_displayed() and "admin" in by_id("tokens-refused").text)
        check("with no list or form", not by_id("new-token").is_displayed())
        by_id("signout").click()
        console.sign_in(TOKEN)
        until("the admin signs in again", lambda: by_id("configs").is_displayed())
        by_id("tokens-nav").click()
        until("the tokens list again", lambda: len(rows()) == 2)
        click(f'button[data-revoke="{issued_id}"]')
        until("revoking asks first", lambda: driver.find_elements(By.CSS_SELECTOR, f'button[data-revoke-confirm="{issued_id}"]'))
        check("and nothing is revoked yet", cli.run("get", "web", "/db/host", token=issued)[0] == 0)
        click(f'button[data-revoke-confirm="{issued_id}"]')
        until("a revoked token leaves the list", lambda: len(rows()) == 1)
        status, _, err = cli.run("get", "web", "/db/host", token=issued)
        check("and is refused at once", status != 0, err)
        by_id("configs-nav").click()
        until("back to the configs from the tokens", lambda: by_id("configs").is_displayed())
        driver.set_window_size(360, 800)
        click('[data-config="web"]')
        until("the config opens at 360 px wide", lambda: by_id("config-title").text == "web")
        check("with nothing wider than the screen", driver.execute_script("return document.documentElement.scrollWidth <= 360"))
        shot("narrow.png")

        # Deleting a config asks for its name, typed exactly.
        by_id("back").click()
        until("the configs again", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-config="copy"]'))
        click('[data-config="copy"]')
        until("the config to delete opens", lambda: by_id("config-title").text == "copy")
        by_id("delete-config").click()
        check("its panel says it is open", by_id("delete-config").get_attribute("aria-expanded") == "true")
        by_id("delete-config-confirm").send_keys("web")
        by_id("delete-config-submit").click()
        until("another name deletes nothing", lambda: by_id("delete-config-error").text.strip() != "")
        check("and the config is still there", "copy" in cli("configs"))
        type_into("delete-config-confirm", "copy")
        by_id("delete-config-submit").click()
        until("its own name deletes it", lambda: by_id("configs").is_displayed() and not driver.find_elements(By.CSS_SELECTOR, '[data-config="copy"]'))
        check("from the store", "copy" not in cli("configs").split())

        console.check_kept_to_policy()
    finally:
        console.quit()


main()
