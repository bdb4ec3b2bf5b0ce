"""JSON values in the web console, in headless Chromium against a `discfg serve` the Swift
test started with tokens required, while the REST API changes the same keys as another
client would: an edit of a JSON object is sent as a merge patch of the members changed,
with If-Match, and lands over a change to another member made meanwhile (both stay); a
change to the same member opens the conflict view; a value a schema refuses (422) shows
each violation beside the editor; a key shows the schemas that check it; JSON that does
not parse is refused with its line and column before anything is sent; and a value that
is not JSON is saved by PUT with If-Match as before. Prints one line per scenario; exits
non-zero on the first that fails. Screenshots go to the screenshots folder.

usage: console_json_check.py --url URL --token TOKEN --discfg DISCFG --screenshots SCREENSHOTS
"""

import json

from headless import Console, RestAPI, check, command_line
from selenium.webdriver.common.by import By

ARGUMENTS = command_line()
URL, TOKEN = ARGUMENTS.url, ARGUMENTS.token
CONFIG = "json"
rest = RestAPI(URL, TOKEN, CONFIG)
api, key_path, stored, put = rest.request, rest.key_path, rest.stored, rest.put


# Records what the page sends (method, path, the headers that matter, body), so a check
# can say how a save went over the wire. Run in the page through WebDriver, not by it.
RECORD_REQUESTS = """
  if (!window.__sent) {
    window.__sent = [];
    const original = window.fetch.bind(window);
    window.fetch = (path, init = {}) => {
      const headers = init.headers || {};
      window.__sent.push({ method: init.method || 'GET', path: String(path), ifMatch: headers['If-Match'] || null,
        contentType: headers['Content-Type'] || null, body: typeof init.body === 'string' ? init.body : null });
      return original(path, init);
    };
  }
  window.__sent.length = 0;
"""


def main():
    console = Console(URL, ARGUMENTS.screenshots)
    driver, by_id, until, shot, type_into = console.driver, console.by_id, console.until, console.shot, console.type_into

    def sent(path_end):
        """The writes the page sent to a key since recording began: (method, ifMatch, contentType, body)."""
        return [
            (request["method"], request["ifMatch"], request["contentType"], request["body"])
            for request in driver.execute_script("return window.__sent")
            if request["path"].endswith(path_end) and request["method"] in ("PUT", "PATCH")
        ]

    def open_key(key, value):
        driver.find_element(By.CSS_SELECTOR, f'[data-key="{key}"]').click()
        until(f"{key} opens in the editor", lambda: by_id("key-path").get_attribute("value") == key and by_id("value").get_attribute("value") == value)

    try:
        api("PUT", f"/v1/{CONFIG}", b"", expect=(200, 201))
        settings = put("/app/settings", '{"host":"a","port":1,"debug":false,"tags":["x"]}', "application/json")
        put("/notes", "first", "text/plain")

        console.open_at_sign_in()
        console.sign_in(TOKEN)
        until("signed in", lambda: driver.find_elements(By.CSS_SELECTOR, f'[data-config="{CONFIG}"]'))
        driver.find_element(By.CSS_SELECTOR, f'[data-config="{CONFIG}"]').click()
        until("the config opens live", lambda: by_id("live-status").text == "Live" and driver.find_elements(By.CSS_SELECTOR, '[data-key="/app/settings"]'))

        # The JSON module on 2,000 random pairs in this browser: it reads what JSON.parse
        # reads, and its merge patch turns the first value into the second.
        failures = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import(new URL('json.js', location.href).href).then((json) => {
              let seed = 7;
              const random = (n) => { seed = (seed * 48271) % 2147483647; return seed % n; };
              const names = ['a', 'b', 'c', '__proto__'];
              const value = (depth) => {
                switch (random(depth > 2 ? 5 : 8)) {
                  case 0: return null;
                  case 1: return random(2) === 0;
                  case 2: return random(200) - 100;
                  case 3: return 'é"\\n'.slice(random(3));
                  case 4: return 's' + random(3);
                  case 5: case 6: return Object.fromEntries(Array.from({ length: random(4) }, () => [names[random(4)], value(depth + 1)]));
                  default: return Array.from({ length: random(3) }, () => value(depth + 1));
                }
              };
              const failed = [];
              let patched = 0;
              for (let i = 0; i < 2000; i += 1) {
                const a = JSON.stringify(value(0), null, random(2) ? 2 : 0);
                const b = JSON.stringify(value(0));
                const x = json.parseJson(a);
                const y = json.parseJson(b);
                if (json.writeJson(x) !== JSON.stringify(JSON.parse(a))) failed.push(['read', a]);
                const patch = json.mergePatch(x, y);
                if (patch) {
                  patched += 1;
                  if (!json.sameJson(json.applyMergePatch(x, patch), y)) failed.push(['patch', a, b]);
                }
                const broken = a.slice(0, random(a.length));
                let refused = false;
                try { JSON.parse(broken); } catch { refused = true; }
                if (refused !== (json.jsonProblem(broken) !== null)) failed.push(['broken', broken]);
              }
              done({ failed: failed.slice(0, 3), patched });
            }).catch((error) => done({ failed: [String(error)], patched: 0 }));
        """)
        check("the JSON reader agrees with JSON.parse, and merge patches rebuild the edit, on 2,000 random pairs",
              failures["failed"] == [] and failures["patched"] > 100, repr(failures))

        # An edit of a JSON object goes as a merge patch; a change made meanwhile to
        # another member by the API is kept.
        # Shown indented, as JSON.stringify(value, null, 2) (and Python's indent=2) lay it out.
        open_key("/app/settings", json.dumps(json.loads('{"host":"a","port":1,"debug":false,"tags":["x"]}'), indent=2))
        check("a JSON object offers saving only the members changed, chosen by default",
              by_id("merge-field").is_displayed() and by_id("merge-patch").is_selected())
        until("with no schema on it", lambda: by_id("schema-info").text == "none")
        type_into("value", '{"host":"a","port":2,"debug":false,"tags":["x"]}')
        api("PATCH", key_path("/app/settings"), '{"debug":true}', "application/merge-patch+json")
        until("the API's change shows while editing", lambda: by_id("changed-notice").is_displayed())
        driver.execute_script(RECORD_REQUESTS)
        by_id("save").click()
        until("the edit saves", lambda: json.loads(stored("/app/settings")["value"]).get("port") == 2)
        check("and both changes survive", json.loads(stored("/app/settings")["value"]) == {"host": "a", "port": 2, "debug": True, "tags": ["x"]},
              stored("/app/settings")["value"])
        writes = sent("/keys/app/settings")
        check("sent as a merge patch of the changed member, with If-Match of the revision the edit began at",
              writes[:1] == [("PATCH", f'"{settings["modRevision"]}"', "application/merge-patch+json", '{"port":2}')], repr(writes))
        check("and, refused for the other change, sent again over it", len(writes) == 2 and writes[1][0] == "PATCH" and writes[1][1] != writes[0][1], repr(writes))
        until("the editor shows the merged value", lambda: json.loads(by_id("value").get_attribute("value")) == {"host": "a", "port": 2, "debug": True, "tags": ["x"]})
        check("and no conflict", not by_id("conflict").is_displayed())

        # A change to the same member is not merged over: the conflict view shows both.
        type_into("value", '{"host":"a","port":3,"debug":true,"tags":["x"]}')
        api("PATCH", key_path("/app/settings"), '{"port":4}', "application/merge-patch+json")
        until("the second change shows while editing", lambda: by_id("changed-notice").is_displayed())
        by_id("save").click()
        # Both sides indented, as the editor shows JSON.
        until("a change to the same member opens the conflict view",
              lambda: by_id("conflict").is_displayed() and '"port": 4' in by_id("conflict-theirs").text and '"port": 3' in by_id("conflict-mine").text)
        check("and nothing of the edit was saved", json.loads(stored("/app/settings")["value"])["port"] == 4)
        shot("json-conflict.png")
        by_id("conflict-discard").click()
        until("discarding loads the current value", lambda: '"port": 4' in by_id("value").get_attribute("value") and not by_id("conflict").is_displayed())

        # JSON that does not parse: its line and column, nothing sent.
        driver.execute_script(RECORD_REQUESTS)
        type_into("value", '{\n  "host": "a",\n  "port": }')
        by_id("save").click()
        until("JSON that does not parse is refused with its line and column", lambda: "line 3, column 11" in by_id("editor-message").text, seconds=5)
        check("before anything is sent", sent("/keys/app/settings") == [], repr(sent("/keys/app/settings")))

        # A schema on the key: shown in the key's view, readable; a value it refuses is
        # not saved, and each violation shows beside the editor.
        schema = '{"type":"object","properties":{"port":{"type":"integer","maximum":65535},"host":{"type":"string","minLength":1}}}'
        api("PUT", f"/v1/{CONFIG}/schema?target=/app/settings", schema, "application/schema+json")
        until("the key's view says its own schema checks it", lambda: "/app/settings (this key)" in by_id("schema-info").text)
        by_id("schema-info").find_element(By.CSS_SELECTOR, "button[data-schema]").click()
        until("and shows the schema as text", lambda: by_id("schema-view").is_displayed() and '"maximum": 65535' in by_id("schema-text").text)
        before = stored("/app/settings")
        type_into("value", '{"host":"","port":70000,"debug":true,"tags":["x"]}')
        by_id("save").click()
        violations = lambda: [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#violations li")]
        until("a value the schema refuses shows each violation beside the editor", lambda: by_id("violations").is_displayed() and len(violations()) == 2)
        check("as key, pointer, message and keyword", any(v.startswith("/app/settings: /port: ") and v.endswith("(maximum)") for v in violations())
              and any(v.startswith("/app/settings: /host: ") and v.endswith("(minLength)") for v in violations()), repr(violations()))
        check("not a generic error", by_id("editor-message").text.strip() == "", by_id("editor-message").text)
        check("nothing was saved", stored("/app/settings")["modRevision"] == before["modRevision"])
        check("and the edit stays in the editor", '"port":70000' in by_id("value").get_attribute("value") and by_id("dirty").is_displayed())
        shot("json-violations.png")
        type_into("value", '{"host":"b","port":8080,"debug":true,"tags":["x"]}')
        by_id("save").click()
        until("a value it accepts saves", lambda: json.loads(stored("/app/settings")["value"])["port"] == 8080)
        check("and the violations go", not by_id("violations").is_displayed())

        # A prefix's schema checks the keys under it: the nearest one is named.
        api("PUT", f"/v1/{CONFIG}/schema?target=/app/", '{"type":"object"}', "application/schema+json")
        put("/app/other", '"text"', "application/json")
        until("a new key arrives", lambda: driver.find_elements(By.CSS_SELECTOR, '[data-key="/app/other"]'))
        open_key("/app/other", '"text"')
        until("a key under a prefix with a schema names it", lambda: "/app/ (the keys under it)" in by_id("schema-info").text)
        check("and a JSON value that is not an object is saved whole", not by_id("merge-field").is_displayed())

        # A value that is not JSON: a PUT of the whole value with If-Match, as before.
        notes = stored("/notes")
        open_key("/notes", "first")
        check("a text value offers no merge patch", not by_id("merge-field").is_displayed())
        driver.execute_script(RECORD_REQUESTS)
        type_into("value", "second")
        by_id("save").click()
        until("a text value saves", lambda: stored("/notes")["value"] == "second")
        check("by PUT with If-Match of the revision it was opened at", sent("/keys/notes") == [("PUT", f'"{notes["modRevision"]}"', "text/plain", "second")], repr(sent("/keys/notes")))
        put("/notes", "theirs", "text/plain")
        until("a change to it shows", lambda: by_id("value").get_attribute("value") == "theirs")
        type_into("value", "mine")
        put("/notes", "theirs again", "text/plain")
        until("a change while editing is flagged", lambda: by_id("changed-notice").is_displayed())
        by_id("save").click()
        until("and a stale save of it still opens the conflict view", lambda: by_id("conflict").is_displayed() and by_id("conflict-theirs").text == "theirs again")
        check("overwriting nothing", stored("/notes")["value"] == "theirs again")

        console.check_kept_to_policy()
    finally:
        console.quit()


main()
