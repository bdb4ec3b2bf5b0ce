"""Managing a config in the web console, in headless Chromium against a `discfg serve` the
Swift test started with tokens required, while the REST API changes the same config as
another client would: discfg's own records (/.discfg/) stay out of the tree and the key
counts, and a key a schema checks carries a badge naming it; JSON values are shown
indented and saved without changing their stored text when left as shown; history
compares JSON values member by member (JSON Pointers) and text line by line; a save
carries the change message typed beside it; the open key is in the address (a reload
and a shared link open it); an error box is cleared when the user acts again; and the
whole config is compared between two revisions and rolled back to one as one change,
after a review and a confirmation. Prints one line per scenario; exits non-zero on the
first that fails. Screenshots go to the screenshots folder.

usage: console_manage_check.py --url URL --token TOKEN --discfg DISCFG --screenshots SCREENSHOTS
"""

import json
import os
import tempfile

from headless import Console, DiscfgCLI, RestAPI, check, command_line
from selenium.webdriver.common.by import By

ARGUMENTS = command_line()
URL, TOKEN = ARGUMENTS.url, ARGUMENTS.token
CONFIG = "ops"
SETTINGS = '{"db":{"host":"a","port":5432},"debug":false,"tags":["x"]}'
# SETTINGS as the console shows it: indented by two spaces, numbers and order as stored.
SETTINGS_SHOWN = '{\n  "db": {\n    "host": "a",\n    "port": 5432\n  },\n  "debug": false,\n  "tags": [\n    "x"\n  ]\n}'
rest = RestAPI(URL, TOKEN, CONFIG)
api, key_path, stored, put = rest.request, rest.key_path, rest.stored, rest.put
cli = DiscfgCLI(ARGUMENTS.discfg, URL, TOKEN)


def revision():
    return api("GET", f"/v1/{CONFIG}")["info"]["revision"]


def values(at=None):
    """The config's keys and values as its export has them (at a revision, or now)."""
    query = f"&revision={at}" if at is not None else ""
    return {item["key"]: (item["value"], item.get("contentType")) for item in api("GET", f"/v1/{CONFIG}/export?format=json{query}")["items"]}


def newest_event(key):
    return api("GET", key_path(key, "history") + "?limit=1")["events"][0]


def main():
    console = Console(URL, ARGUMENTS.screenshots)
    driver, by_id, until, click, shot, type_into = console.driver, console.by_id, console.until, console.click, console.shot, console.type_into
    value = lambda: by_id("value").get_attribute("value")
    hash_now = lambda: driver.execute_script("return window.location.hash")
    diff_lines = lambda: [line.get_attribute("textContent") for line in driver.find_elements(By.CSS_SELECTOR, "#diff-lines .diff-line")]

    try:
        api("PUT", f"/v1/{CONFIG}", b"")
        put("/app/settings", SETTINGS, "application/json")
        put("/notes", "first")
        put("/odd key/100%", "odd")
        api("PUT", f"/v1/{CONFIG}/schema?target=/app/", '{"type":"object"}', "application/schema+json")
        base = revision()
        check("the store counts the schema's record as a key", api("GET", f"/v1/{CONFIG}")["info"].get("keyCount") == 4, repr(api("GET", f"/v1/{CONFIG}")))

        console.open_at_sign_in()
        console.sign_in(TOKEN)
        until("signed in", lambda: driver.find_elements(By.CSS_SELECTOR, f'[data-config="{CONFIG}"]'))

        # discfg's own records: not in the tree, not counted; a schema's keys are badged.
        until("the configs list counts only the config's own keys, not its schema's record",
              lambda: "3 keys" in driver.find_element(By.CSS_SELECTOR, f'[data-config="{CONFIG}"]').text)
        click(f'[data-config="{CONFIG}"]')
        until("the config opens live", lambda: by_id("live-status").text == "Live" and driver.find_elements(By.CSS_SELECTOR, '[data-key="/app/settings"]'))
        check("/.discfg/ is not in the tree", not driver.find_elements(By.CSS_SELECTOR, '#keys [data-key^="/.discfg"], #keys [data-folder^="/.discfg"]'))
        check("nor in its count", by_id("key-count").text == "3 keys", by_id("key-count").text)
        until("a key under a schema's prefix carries a badge naming the schema",
              lambda: [badge.text for badge in driver.find_elements(By.CSS_SELECTOR, '[data-key="/app/settings"] [data-schema-badge]')] == ["schema /app/"])
        check("and a key no schema checks carries none", not driver.find_elements(By.CSS_SELECTOR, '[data-key="/notes"] [data-schema-badge]'))
        badges = lambda: [badge.get_attribute("data-schema-badge") for badge in driver.find_elements(By.CSS_SELECTOR, '[data-key="/app/settings"] [data-schema-badge]')]
        api("PUT", f"/v1/{CONFIG}/schema?target=/app/settings", '{"type":"object"}', "application/schema+json")
        until("a schema added meanwhile on the key itself badges it too", lambda: badges() == ["/app/settings", "/app/"])
        check("and is still not counted", by_id("key-count").text == "3 keys", by_id("key-count").text)
        api("DELETE", f"/v1/{CONFIG}/schema?target=/app/settings")
        until("a schema removed takes its badge", lambda: badges() == ["/app/"])
        shot("manage-tree.png")

        # JSON values indented; the open key in the address.
        click('[data-key="/app/settings"]')
        until("a JSON value is shown indented in the editor", lambda: value() == SETTINGS_SHOWN, seconds=5)
        check("with nothing unsaved", not by_id("dirty").is_displayed())
        check("the open key is in the address", hash_now() == "#/ops/app/settings", hash_now())
        before = stored("/app/settings")
        type_into("change-message", "checked, no change")
        by_id("save").click()
        until("saving it as shown stores a new revision", lambda: stored("/app/settings")["modRevision"] > before["modRevision"])
        check("with its text as stored, not the indented layout", stored("/app/settings")["value"] == SETTINGS, stored("/app/settings")["value"])
        check("and the message typed beside it", newest_event("/app/settings").get("message") == "checked, no change", repr(newest_event("/app/settings")))
        until("the message field is emptied after the save", lambda: by_id("change-message").get_attribute("value") == "")

        # An edit in the indented text, with a message: a member changed, a message kept.
        until("the editor holds the saved value", lambda: value() == SETTINGS_SHOWN)
        type_into("value", SETTINGS_SHOWN.replace('"host": "a"', '"host": "b"'))
        type_into("change-message", "move the database — to b")
        by_id("save").click()
        until("the edit saves", lambda: json.loads(stored("/app/settings")["value"])["db"]["host"] == "b")
        check("only the member changed", json.loads(stored("/app/settings")["value"]) == {"db": {"host": "b", "port": 5432}, "debug": False, "tags": ["x"]})
        check("with the change message, in UTF-8", newest_event("/app/settings").get("message") == "move the database — to b", repr(newest_event("/app/settings")))

        # History: JSON compared member by member, its messages shown.
        by_id("history-toggle").click()
        entries = lambda: driver.find_elements(By.CSS_SELECTOR, "#history-list > li[data-revision]")
        until("the history lists three changes", lambda: len(entries()) == 3)
        check("each value indented as in the editor", entries()[2].find_element(By.CSS_SELECTOR, "pre").text == SETTINGS_SHOWN)
        check("each change shows its message", [entry.find_elements(By.CSS_SELECTOR, ".change-message")[0].text if entry.find_elements(By.CSS_SELECTOR, ".change-message") else "" for entry in entries()]
              == ["move the database — to b", "checked, no change", ""])
        until("a JSON value's history shows the member changed by its JSON Pointer, not lines",
              lambda: diff_lines() == ['/db/host: "a" → "b"'])
        check("marked with the pointer", [line.get_attribute("data-pointer") for line in driver.find_elements(By.CSS_SELECTOR, "#diff-lines .diff-line")] == ["/db/host"])
        check("and summed up", "1 changed, 0 added, 0 removed" in by_id("diff-summary").text, by_id("diff-summary").text)
        driver.execute_script("arguments[0].scrollIntoView()", by_id("history"))
        shot("manage-history.png")
        put("/app/settings", '{"db":{"host":"b"},"debug":false,"tags":["x","y"],"new":{"a":1}}', "application/json")
        until("members added and removed are named too",
              lambda: diff_lines() == ['/db/port: removed (was 5432)', '/tags/1: added "y"', '/new: added {"a":1}'])
        put("/notes", "second")
        click('[data-key="/notes"]')
        until("a text value opens", lambda: value() == "second" and hash_now() == "#/ops/notes")
        until("and its history keeps the line diff", lambda: diff_lines() == ["- removed: first", "+ added: second"])

        # The address: a link to a key opens it, a reload too, odd paths included.
        driver.get(URL + "/ui/#/ops/odd%20key/100%25")
        until("a link naming a key opens it", lambda: by_id("key-path").get_attribute("value") == "/odd key/100%" and value() == "odd")
        driver.refresh()
        until("a reload opens the same config and key", lambda: by_id("config-title").text == CONFIG and by_id("key-path").get_attribute("value") == "/odd key/100%" and value() == "odd")
        check("the address still names it", hash_now() == "#/ops/odd%20key/100%25", hash_now())
        driver.get(URL + "/ui/#/ops/app/settings")
        until("a link to a JSON key opens it indented", lambda: by_id("key-path").get_attribute("value") == "/app/settings" and '"host": "b"' in value())
        driver.execute_script("window.history.back()")
        until("Back returns to the key opened before", lambda: by_id("key-path").get_attribute("value") == "/odd key/100%")
        driver.get(URL + "/ui/#/ops/nope")
        until("a link to a key the config lacks says so", lambda: "/nope" in by_id("config-error").text)

        # Stale errors go when the user acts again.
        click('[data-key="/notes"]')
        until("the next key opens", lambda: value() == "second")
        check("and the error about the link is gone", by_id("config-error").text == "", by_id("config-error").text)
        click('[data-key="/app/settings"]')
        until("the JSON key opens", lambda: '"host": "b"' in value())
        type_into("value", '{"db": }')
        by_id("save").click()
        until("invalid JSON is refused", lambda: "not valid JSON" in by_id("editor-message").text)
        by_id("format-json").click()
        until("formatting it says why it cannot", lambda: "Cannot format" in by_id("editor-message").text)
        by_id("history-toggle").click()
        until("the next action clears the error box", lambda: by_id("editor-message").text == "")
        driver.execute_script("arguments[0].value = arguments[1]", by_id("change-message"), "bad\u0007bell")
        type_into("value", SETTINGS)
        by_id("save").click()
        until("a change message with a control character is refused before sending", lambda: "control characters" in by_id("editor-message").text)
        check("and nothing is saved", '"new"' in stored("/app/settings")["value"])
        driver.get(URL + "/ui/#/ops/notes")
        until("a link to another key while edits are unsaved asks first", lambda: "unsaved" in by_id("editor-message").text)
        check("and the address keeps naming the key still open", hash_now() == "#/ops/app/settings", hash_now())
        click('[data-key="/notes"]')
        until("asking again leaves, the question cleared", lambda: value() == "second" and by_id("editor-message").text == "" and hash_now() == "#/ops/notes")

        # The config at a revision: its own keys only, JSON indented.
        by_id("at-revision-toggle").click()
        type_into("at-revision", str(base))
        by_id("at-revision-submit").click()
        until("the config at a revision opens", lambda: by_id("snapshot").is_displayed())
        at = lambda key: [pre.text for pre in driver.find_elements(By.CSS_SELECTOR, f'#snapshot-keys pre[data-snapshot-key="{key}"]')]
        check("with JSON values indented", at("/app/settings") == [SETTINGS_SHOWN], repr(at("/app/settings")))
        check("and no record of discfg's own", not driver.find_elements(By.CSS_SELECTOR, '#snapshot-keys pre[data-snapshot-key^="/.discfg"]') and by_id("snapshot-count").text.startswith("3 keys"),
              by_id("snapshot-count").text)
        by_id("snapshot-close").click()
        until("closing it returns to the keys", lambda: by_id("keys").is_displayed())

        # The whole config: two revisions compared, then rolled back to one as one change.
        put("/added", "later")
        api("DELETE", key_path("/odd key/100%"))
        until("the deleted key leaves the tree", lambda: not driver.find_elements(By.CSS_SELECTOR, '[data-key="/odd key/100%"]'))
        now = revision()
        by_id("revisions-toggle").click()
        until("the revisions panel opens", lambda: by_id("revisions").is_displayed())
        type_into("compare-from", "x")
        by_id("compare-submit").click()
        until("a revision that is not a number is refused", lambda: "whole number" in by_id("revisions-error").text)
        type_into("compare-from", str(base))
        type_into("compare-to", str(now))
        by_id("compare-submit").click()
        until("comparing two revisions lists each key that differs",
              lambda: sorted(item.get_attribute("data-compare-key") for item in driver.find_elements(By.CSS_SELECTOR, "#compare-changes > li"))
              == ["/added", "/app/settings", "/notes", "/odd key/100%"])
        check("and the stale error is gone", by_id("revisions-error").text == "")
        kind = lambda key: driver.find_element(By.CSS_SELECTOR, f'#compare-changes > li[data-compare-key="{key}"]').get_attribute("class")
        check("added, changed and deleted", (kind("/added"), kind("/notes"), kind("/odd key/100%")) == ("compare-add", "compare-change", "compare-delete"))
        pointers = [line.get_attribute("textContent") for line in driver.find_elements(By.CSS_SELECTOR, '#compare-changes > li[data-compare-key="/app/settings"] .diff-line')]
        check("a JSON value's members by their JSON Pointers", pointers == ['/db/host: "a" → "b"', "/db/port: removed (was 5432)", '/tags/1: added "y"', '/new: added {"a":1}'], repr(pointers))
        check("a text value's lines", [line.get_attribute("textContent") for line in driver.find_elements(By.CSS_SELECTOR, '#compare-changes > li[data-compare-key="/notes"] .diff-line')]
              == ["- removed: first", "+ added: second"])
        check("summed up", f"From revision {base} to revision {now}: 2 changed, 1 added, 1 deleted" in by_id("compare-summary").text, by_id("compare-summary").text)
        shot("manage-compare.png")

        type_into("rollback-to", str(base))
        type_into("rollback-message", "undo the day")
        by_id("rollback-review").click()
        until("a rollback is reviewed first, asking to confirm", lambda: by_id("rollback-confirm").is_displayed() and f"revision {base}" in by_id("rollback-confirm-text").text)
        check("showing what it changes", len(driver.find_elements(By.CSS_SELECTOR, "#compare-changes > li")) == 4)
        check("and changing nothing yet", revision() == now)
        shot("manage-rollback.png")
        put("/notes", "third")
        by_id("rollback-yes").click()
        until("a change made after the review stops the rollback", lambda: "Review it again" in by_id("revisions-error").text)
        check("which changes nothing", values()["/notes"][0] == "third" and "/added" in values())
        by_id("rollback-review").click()
        until("reviewed again", lambda: by_id("rollback-confirm").is_displayed())
        by_id("rollback-no").click()
        check("Cancel rolls nothing back", not by_id("rollback-confirm").is_displayed() and "/added" in values())
        by_id("rollback-review").click()
        until("reviewed once more", lambda: by_id("rollback-confirm").is_displayed())
        before = revision()
        by_id("rollback-yes").click()
        until("the rollback lands", lambda: "Rolled ops back" in by_id("compare-summary").text)
        check("the config is what it was at that revision", values() == values(base), repr((values(), values(base))))
        check("as one new change: one revision", revision() == before + 1, repr((before, revision())))
        check("carrying its message", newest_event("/notes").get("message") == "undo the day" and newest_event("/app/settings").get("message") == "undo the day")
        until("the tree follows", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-key="/odd key/100%"]') and not driver.find_elements(By.CSS_SELECTOR, '[data-key="/added"]'))
        until("and the open key with it", lambda: value() == "first")

        # A rollback that would write a secret as it was sealed (it would no longer open)
        # is not offered: discfg rollback seals it again.
        key_file = os.path.join(tempfile.mkdtemp(prefix="discfg-keys-"), "ops.key")
        cli("key", "init", key_file)
        cli("update", CONFIG, "--encryption", f"file://{key_file}")
        cli("set", CONFIG, "/secret", "one", "--secret")
        sealed_at = revision()
        cli("set", CONFIG, "/secret", "two", "--secret")
        type_into("rollback-to", str(sealed_at))
        by_id("rollback-review").click()
        until("a rollback that would write a sealed secret as it was is refused, naming it",
              lambda: "/secret" in by_id("revisions-error").text and "discfg rollback" in by_id("revisions-error").text)
        check("with nothing to confirm", not by_id("rollback-confirm").is_displayed())
        check("and nothing changed", revision() == sealed_at + 1)

        console.check_kept_to_policy()
    finally:
        console.quit()


main()
