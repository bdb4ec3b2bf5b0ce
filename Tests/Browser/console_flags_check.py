"""A config's feature flags in the web console, in headless Chromium against a `discfg serve`
the Swift test started with tokens required, while the REST API and the CLI change the same
flag sets as other clients would: the Flags view lists every flag of every flag set under
/flags/ with its state, default variant, variants (values as written), targeting and
metadata; the kill switch disables and enables a flag after a confirmation, with a change
message, as one change that rewrites only that flag's state (every other byte of the set
kept), so that OFREP answers DISABLED; a change made elsewhere shows without a reload; a
switch refused by compare-and-swap says so and shows the set as it is now; a read-only
token's switch is refused with the API's words and changes nothing. Prints one line per
check; exits non-zero on the first that fails. Screenshots go to the screenshots folder.

usage: console_flags_check.py --url URL --token TOKEN --discfg DISCFG --screenshots SCREENSHOTS
"""

import json

from headless import Console, DiscfgCLI, RestAPI, check, command_line
from selenium.webdriver.common.by import By

ARGUMENTS = command_line()
URL, TOKEN = ARGUMENTS.url, ARGUMENTS.token
CONFIG = "shop"
# Spacing, member order and numbers as a person wrote them: the kill switch must keep them.
WEB = """{
  "flags": {
    "new-ui": {
      "state": "ENABLED",
      "variants": {"on": true, "off": false},
      "defaultVariant": "off",
      "targeting": {"if": [{"==": [{"var": "plan"}, "pro"]}, "on", null]},
      "metadata": {"owner": "web-team"}
    },
    "price": { "state": "ENABLED", "variants": {"low": 10.0, "high": 12.50}, "defaultVariant": "low" }
  },
  "$evaluators": {},
  "metadata": {"team": "web"}
}"""
OPS = '{"flags":{"maintenance":{"state":"DISABLED","variants":{"banner":{"text":"back soon"},"none":{}},"defaultVariant":"none"}}}'
rest = RestAPI(URL, TOKEN, CONFIG)
api, key_path, stored, put = rest.request, rest.key_path, rest.stored, rest.put
cli = DiscfgCLI(ARGUMENTS.discfg, URL, TOKEN)


def newest_event(key):
    return api("GET", key_path(key, "history") + "?limit=1")["events"][0]


def evaluate(flag, context):
    """The OFREP answer for one flag, as an OpenFeature SDK's provider asks for it."""
    return api("POST", f"/v1/{CONFIG}/ofrep/v1/evaluate/flags/{flag}", json.dumps({"context": context}), "application/json")


def with_state(text, flag, state):
    """`text` with only the state of `flag` (written `"state": "…"` in WEB) changed."""
    start = text.index(f'"{flag}"')
    at = text.index('"state": "', start) + len('"state": "')
    end = text.index('"', at)
    return text[:at] + state + text[end:]


def main():
    console = Console(URL, ARGUMENTS.screenshots)
    driver, by_id, until, click, shot, type_into = console.driver, console.by_id, console.until, console.click, console.shot, console.type_into
    flag_css = lambda flag: f'#flags-list article[data-flag="{flag}"]'
    flag_state = lambda flag: driver.find_element(By.CSS_SELECTOR, flag_css(flag)).get_attribute("data-state")
    flag_field = lambda flag, field: driver.find_element(By.CSS_SELECTOR, f'{flag_css(flag)} [data-field="{field}"]').text
    variants = lambda flag: [item.text for item in driver.find_elements(By.CSS_SELECTOR, f"{flag_css(flag)} .flag-variants li")]
    listed = lambda: [article.get_attribute("data-flag") for article in driver.find_elements(By.CSS_SELECTOR, "#flags-list article[data-flag]")]

    def switch(flag, message):
        """Asks for the kill switch of `flag`, types the message and confirms."""
        click(f'button[data-flag-switch="{flag}"]')
        until("the switch asks for a confirmation and a message", lambda: by_id("flag-confirm").is_displayed() and f"“{flag}”" in by_id("flag-confirm-text").text)
        type_into("flag-message", message)
        by_id("flag-confirm-yes").click()

    try:
        api("PUT", f"/v1/{CONFIG}", b"")
        put("/notes", "no flags here")

        console.open_at_sign_in()
        console.sign_in(TOKEN)
        until("signed in", lambda: driver.find_elements(By.CSS_SELECTOR, f'[data-config="{CONFIG}"]'))
        click(f'[data-config="{CONFIG}"]')
        until("the config opens live", lambda: by_id("live-status").text == "Live")
        by_id("flags-toggle").click()
        until("a config with no flags says how to add a flag set",
              lambda: "discfg set shop /flags/NAME -d file.json" in by_id("flags-list").text and "docs/flags.md" in by_id("flags-list").text)

        # Flag sets written elsewhere appear live, each flag with all it holds.
        put("/flags/web", WEB, "application/json")
        put("/flags/ops", OPS, "application/json")
        until("the flags of every flag set are listed, live", lambda: listed() == ["maintenance", "new-ui", "price"])
        check("with their flag set", [section.get_attribute("data-flag-set") for section in driver.find_elements(By.CSS_SELECTOR, "#flags-list section[data-flag-set]")] == ["/flags/ops", "/flags/web"])
        check("and a summary", by_id("flags-summary").text == "3 flags in 2 flag sets, 1 disabled.", by_id("flags-summary").text)
        check("states marked", [flag_state(flag) for flag in listed()] == ["DISABLED", "ENABLED", "ENABLED"]
              and driver.find_element(By.CSS_SELECTOR, f'{flag_css("maintenance")} .flag-state').text == "DISABLED")
        check("variants with their values as written, the default marked", variants("price") == ["low = 10.0 default", "high = 12.50"], repr(variants("price")))
        check("object variants too", variants("maintenance") == ['banner = {"text":"back soon"}', "none = {} default"], repr(variants("maintenance")))
        check("the default variant", flag_field("new-ui", "defaultVariant") == "off")
        check("targeting indented", flag_field("new-ui", "targeting") == json.dumps({"if": [{"==": [{"var": "plan"}, "pro"]}, "on", None]}, indent=2), flag_field("new-ui", "targeting"))
        check("a flag with none is static", flag_field("price", "targeting") == "none — static")
        check("flag metadata", flag_field("new-ui", "metadata") == 'owner="web-team"', flag_field("new-ui", "metadata"))
        check("and set metadata", 'team="web"' in driver.find_element(By.CSS_SELECTOR, '#flags-list section[data-flag-set="/flags/web"]').text)
        shot("flags-view.png")

        # The kill switch: one change, only the flag's state, with the message.
        before = stored("/flags/web")
        click('button[data-flag-switch="new-ui"]')
        until("disabling asks first", lambda: by_id("flag-confirm").is_displayed() and by_id("flag-confirm-yes").text == "Disable flag")
        by_id("flag-confirm-no").click()
        check("and cancelling changes nothing", by_id("flag-confirm").is_displayed() is False and stored("/flags/web")["modRevision"] == before["modRevision"])
        switch("new-ui", "checkout errors — incident 412")
        until("the switch disables the flag in the store", lambda: json.loads(stored("/flags/web")["value"])["flags"]["new-ui"]["state"] == "DISABLED")
        after = stored("/flags/web")
        check("as one change of the set", after["modRevision"] > before["modRevision"] and after["version"] == before["version"] + 1)
        check("rewriting only that flag's state: every other byte kept", after["value"] == with_state(WEB, "new-ui", "DISABLED"), after["value"])
        check("its content type kept", after.get("contentType") == "application/json")
        check("the other set untouched", stored("/flags/ops")["value"] == OPS)
        check("the log shows the message", newest_event("/flags/web").get("message") == "checkout errors — incident 412", repr(newest_event("/flags/web")))
        listing = json.loads(cli("flag", "ls", CONFIG, "-f", "json"))
        check("the CLI sees it disabled", {flag["key"]: flag["state"] for flag in listing["flags"]} == {"maintenance": "DISABLED", "new-ui": "DISABLED", "price": "ENABLED"}, repr(listing))
        answer = evaluate("new-ui", {"targetingKey": "u1", "plan": "pro"})
        check("OFREP answers DISABLED", answer.get("reason") == "DISABLED" and "value" not in answer, repr(answer))
        until("the view marks it disabled", lambda: flag_state("new-ui") == "DISABLED" and "2 disabled" in by_id("flags-summary").text)
        until("and its switch now enables", lambda: driver.find_element(By.CSS_SELECTOR, 'button[data-flag-switch="new-ui"]').text == "Enable…")
        check("the confirmation is gone", not by_id("flag-confirm").is_displayed())

        switch("new-ui", "fixed in 2.4.1")
        until("enabling again", lambda: json.loads(stored("/flags/web")["value"])["flags"]["new-ui"]["state"] == "ENABLED")
        check("gives back the set as written", stored("/flags/web")["value"] == WEB)
        check("with its message", newest_event("/flags/web").get("message") == "fixed in 2.4.1")
        answer = evaluate("new-ui", {"targetingKey": "u1", "plan": "pro"})
        check("OFREP answers the targeting again", answer.get("reason") == "TARGETING_MATCH" and answer.get("value") is True, repr(answer))
        until("the view marks it enabled", lambda: flag_state("new-ui") == "ENABLED")

        # Changes made elsewhere: the CLI's kill switch, a REST PUT.
        cli("flag", "disable", CONFIG, "price", "-m", "from the terminal")
        until("a flag disabled from the CLI shows disabled without a reload", lambda: flag_state("price") == "DISABLED")
        put("/flags/ops", '{"flags":{"maintenance":{"state":"ENABLED","variants":{"on":true},"defaultVariant":"on"},"beta":{"state":"ENABLED","variants":{"a":"x","b":"y"},"defaultVariant":"a","targeting":{"fractional":[["a",50],["b",50]]}}}}', "application/json")
        until("a set rewritten over REST shows its new flags", lambda: listed() == ["maintenance", "beta", "new-ui", "price"] and flag_state("maintenance") == "ENABLED")
        check("targeting of the new flag", '"fractional"' in flag_field("beta", "targeting"))
        rest.request("DELETE", key_path("/flags/ops"))
        until("a set deleted leaves the view", lambda: listed() == ["new-ui", "price"])

        # A switch refused by compare-and-swap: the set changed while the console did not follow.
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": [f"*/v1/{CONFIG}/watch*"]})
        driver.refresh()
        until("reopened without its watch", lambda: by_id("live-status").text != "Live" and driver.find_elements(By.CSS_SELECTOR, '[data-key="/flags/web"]'))
        by_id("flags-toggle").click()
        until("the flags show", lambda: listed() == ["new-ui", "price"])
        moved = with_state(stored("/flags/web")["value"], "new-ui", "DISABLED").replace('"high": 12.50', '"high": 13.00')
        put("/flags/web", moved, "application/json")
        changed = stored("/flags/web")
        check("not yet seen by the console", flag_state("new-ui") == "ENABLED")
        switch("new-ui", "stale")
        until("a switch over a set changed meanwhile is refused with one clear message",
              lambda: "someone changed /flags/web since it was shown" in by_id("flags-error").text)
        check("and writes nothing", stored("/flags/web")["modRevision"] == changed["modRevision"] and newest_event("/flags/web").get("message") != "stale")
        until("the set is read again and shown as it is now", lambda: flag_state("new-ui") == "DISABLED" and variants("price")[1] == "high = 13.00")
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        until("the watch follows again", lambda: by_id("live-status").text == "Live", seconds=15)
        put("/flags/web", WEB, "application/json")
        until("and live changes show again", lambda: flag_state("new-ui") == "ENABLED" and variants("price")[1] == "high = 12.50")

        # A schema on the set that refuses the switch: the API's words, nothing written.
        api("PUT", f"/v1/{CONFIG}/schema?target=/flags/web", json.dumps({"properties": {"flags": {"properties": {"new-ui": {"properties": {"state": {"const": "ENABLED"}}}}}}}), "application/schema+json")
        guarded = stored("/flags/web")
        switch("new-ui", "against the schema")
        until("a switch a schema refuses shows the API's message and the violation",
              lambda: "schema violation, nothing was changed: /flags/web: /flags/new-ui/state" in by_id("flags-error").text and by_id("flag-confirm").is_displayed())
        check("and writes nothing", stored("/flags/web")["modRevision"] == guarded["modRevision"] and flag_state("new-ui") == "ENABLED")
        api("DELETE", f"/v1/{CONFIG}/schema?target=/flags/web")
        by_id("flag-confirm-no").click()

        # A flag set that cannot be read is one line, not a broken page (the server refuses
        # to store one, so the console's reading of one is checked in the page itself).
        problem = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import(new URL('flag-sets.js', window.location.href).href)
              .then((m) => done([m.readFlagSet({ value: '{"flags": [1]}' }).problem, m.readFlagSet({ value: 'nope' }).problem.slice(0, 14)]))
              .catch((error) => done(String(error)));""")
        check("a set that is no flag set reads as one sentence", problem == ['it has no "flags" object.', "it is not JSON"], repr(problem))

        # A read-only token: the switch is refused with the API's words, nothing changes.
        status, issued = rest.call("POST", "/admin/tokens", json.dumps({"role": "read", "description": "flags reader"}), "application/json")
        check("a read token is issued", status in (200, 201) and issued.get("token", "").startswith("dcfg_"), repr(issued))
        by_id("signout").click()
        console.sign_in(issued["token"])
        until("the read token signs in", lambda: driver.find_elements(By.CSS_SELECTOR, f'[data-config="{CONFIG}"]'))
        click(f'[data-config="{CONFIG}"]')
        until("and opens the config", lambda: by_id("live-status").text == "Live")
        by_id("flags-toggle").click()
        until("it sees the flags", lambda: listed() == ["new-ui", "price"])
        unchanged = stored("/flags/web")
        switch("new-ui", "not allowed")
        until("its switch is refused with the API's message", lambda: "has role read and may not change keys in config shop" in by_id("flags-error").text)
        check("and nothing is written", stored("/flags/web")["modRevision"] == unchanged["modRevision"] and flag_state("new-ui") == "ENABLED")
        shot("flags-refused.png")

        console.check_kept_to_policy()
    finally:
        console.quit()


main()
