"""A config's staged deployments in the web console, in headless Chromium against a
`discfg serve` the Swift test started with tokens required, while the CLI and the REST API
move the same deployment as other clients would: the config page's panel shows a running
deployment (its state, the share as a bar and a number, the next step counting down, the
strategy, the signals, who started it and why, its transitions); pause, resume and roll
back ask for a confirmation and a change message and post the transition with after= the
transitions shown, so the store's record (REST) and `discfg log` carry the message; a pause
made over REST shows without a reload; a transition over a deployment moved meanwhile is
refused with one clear message and the deployment read again; a read token's button gets
the API's 403 message; once rolled back and recorded by serve's monitor, the panel says no
deployment runs and shows the one that ended, marked ended; a deployment on a short schedule
moves to its next step, bakes and completes on the panel with no reload, by the clock alone
(no record changes meanwhile). Prints one line per check; exits non-zero on the first that
fails. Screenshots go to the screenshots folder.

usage: console_deploy_check.py --url URL --token TOKEN --discfg DISCFG --screenshots SCREENSHOTS
"""

import json
import os
import re
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from headless import Console, DiscfgCLI, RestAPI, check, command_line
from selenium.webdriver.common.by import By

ARGUMENTS = command_line()
URL, TOKEN = ARGUMENTS.url, ARGUMENTS.token
CONFIG = "shop"
rest = RestAPI(URL, TOKEN, CONFIG)
api, put = rest.request, rest.put
cli = DiscfgCLI(ARGUMENTS.discfg, URL, TOKEN)


def stored_deployment(id):
    """The deployment as the REST API has it now."""
    return api("GET", f"/v1/{CONFIG}/deployments/{id}")["deployment"]


def transition(id, action, after, message, token=TOKEN):
    """POST deployments/{id}/{action}?after= with a change message, as another client: (status, answer)."""
    request = urllib.request.Request(f"{URL}/v1/{CONFIG}/deployments/{id}/{action}?after={after}", method="POST", data=b"")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Discfg-Message", urllib.parse.quote(message))
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read().decode())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read().decode())


def main():
    console = Console(URL, ARGUMENTS.screenshots)
    driver, by_id, until, click, shot, type_into = console.driver, console.by_id, console.until, console.click, console.shot, console.type_into

    try:
        api("PUT", f"/v1/{CONFIG}", b"")
        api("PUT", "/v1/plain", b"")
        put("/pool/size", "10")
        put("/pool/timeout", "30s")
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as candidate:
            candidate.write('{"/pool/size": 20}')
        started = cli("deploy", "start", CONFIG, "--prefix", "/pool/", "-d", candidate.name, "--strategy", "linear", "--step", "20",
                      "--interval", "10m", "--bake", "10m", "-m", "raise the pool size")
        os.unlink(candidate.name)
        found = re.search(r"deployment ([0-9a-f]{16}) started", started)
        check("a deployment is started from the CLI before the console opens", found is not None, started)
        ID = found.group(1)

        card_css = f'#deployments-list article[data-deployment="{ID}"]'
        card = lambda: driver.find_element(By.CSS_SELECTOR, card_css)
        card_state = lambda: card().get_attribute("data-state")
        field = lambda name: driver.find_element(By.CSS_SELECTOR, f'{card_css} [data-field="{name}"]').text
        buttons = lambda: sorted(button.get_attribute("data-deployment-action") for button in driver.find_elements(By.CSS_SELECTOR, f"{card_css} button[data-deployment-action]"))
        transitions = lambda: [item.text for item in driver.find_elements(By.CSS_SELECTOR, f"{card_css} .deployment-transitions li")]
        panel = lambda: by_id("deployments-list").text

        def ask(action, message):
            """Clicks the card's `action` button, types the message and confirms."""
            click(f'{card_css} button[data-deployment-action="{action}"]')
            until(f"{action} asks for a confirmation naming the deployment", lambda: by_id("deploy-confirm").is_displayed() and ID in by_id("deploy-confirm-text").text)
            type_into("deploy-message", message)
            by_id("deploy-confirm-yes").click()

        def open_config(name):
            click(f'[data-config="{name}"]')
            until(f"{name} opens live", lambda: by_id("live-status").text == "Live")

        console.open_at_sign_in()
        console.sign_in(TOKEN)
        until("signed in", lambda: driver.find_elements(By.CSS_SELECTOR, f'[data-config="{CONFIG}"]'))

        # A config with no deployment: one quiet line saying how to start one.
        open_config("plain")
        until("a config with no deployment says so in one line, with how to start one",
              lambda: driver.find_elements(By.CSS_SELECTOR, '#deployments-list [data-deployments="none"]')
              and "discfg deploy start plain" in panel() and "docs/deploy.md" in panel())
        check("and nothing else", len(driver.find_elements(By.CSS_SELECTOR, "#deployments-list > *")) == 1)
        by_id("back").click()

        # The running deployment, as the CLI's `deploy status` shows it.
        open_config(CONFIG)
        until("the panel shows the deployment DEPLOYING", lambda: card_state() == "DEPLOYING")
        check("its state marked", driver.find_element(By.CSS_SELECTOR, f"{card_css} .deployment-state").text == "DEPLOYING")
        check("the share now as a number", field("share") == "20 %", field("share"))
        check("and as a bar", driver.find_element(By.CSS_SELECTOR, f"{card_css} meter").get_attribute("value") == "2000")
        check("at step 1 of 5", "(step 1 of 5)" in card().text)
        check("the prefix", "prefix /pool/" in card().text)
        check("the next step's time and how long until it", re.fullmatch(r"\d\d:\d\d:\d\d \(in (9 min \d+|10 min 0) s\)", field("next")), field("next"))
        first = field("next")
        until("the countdown moves with the clock, without a request", lambda: field("next") != first, seconds=5)
        check("the strategy", field("strategy") == "linear, +20 % every 10m, bake 10m", field("strategy"))
        check("the signals", field("signals") == "none: only a person rolls it back", field("signals"))
        check("who started it and why", re.fullmatch(r"\d\d:\d\d:\d\d by token:\S+: raise the pool size", field("started")), field("started"))
        record = stored_deployment(ID)
        check("the revisions", field("revisions") == f"{record['stableRevision']} stable, {record['candidate']['revision']} candidate", field("revisions"))
        check("no transitions yet", field("transitions") == "none")
        check("no health without agents' reports", not driver.find_elements(By.CSS_SELECTOR, f'{card_css} [data-field="health"]'))
        check("pause and rollback offered, not resume", buttons() == ["pause", "rollback"], repr(buttons()))
        shot("deploy-running.png")

        # Pause with a message: cancelling first changes nothing.
        click(f'{card_css} button[data-deployment-action="pause"]')
        until("pause asks first", lambda: by_id("deploy-confirm").is_displayed() and by_id("deploy-confirm-yes").text == "Pause deployment")
        by_id("deploy-confirm-no").click()
        check("and cancelling changes nothing", not by_id("deploy-confirm").is_displayed() and stored_deployment(ID)["transitions"] == [])
        ask("pause", "error rate up on the candidate")
        until("the pause is recorded in the store", lambda: stored_deployment(ID)["status"]["state"] == "PAUSED")
        paused = stored_deployment(ID)
        check("with the message as its reason", [(t["state"], t["reason"]) for t in paused["transitions"]] == [("PAUSED", "error rate up on the candidate")], repr(paused["transitions"]))
        check("and in discfg log", "error rate up on the candidate" in cli("log", CONFIG))
        until("the panel shows it PAUSED", lambda: card_state() == "PAUSED" and field("share") == "20 %")
        check("resume and rollback offered, not pause", buttons() == ["resume", "rollback"], repr(buttons()))
        check("the transition listed with who and why", re.fullmatch(r"\d\d:\d\d:\d\d PAUSED by token:\S+: error rate up on the candidate", transitions()[0]), repr(transitions()))
        check("the schedule waits", field("next") == "none while paused: the schedule waits", field("next"))

        ask("resume", "the errors were a client bug")
        until("resume makes it DEPLOYING in the store", lambda: stored_deployment(ID)["status"]["state"] == "DEPLOYING")
        check("with its message", stored_deployment(ID)["transitions"][-1]["reason"] == "the errors were a client bug")
        until("and on the panel", lambda: card_state() == "DEPLOYING" and buttons() == ["pause", "rollback"] and len(transitions()) == 2)

        # A pause made over REST shows without a reload.
        status, answer = transition(ID, "pause", 2, "paused over REST")
        check("a pause over REST", status == 200 and answer["deployment"]["status"]["state"] == "PAUSED", repr(answer))
        until("shows on the panel without a reload", lambda: card_state() == "PAUSED" and "paused over REST" in transitions()[-1])

        # A transition over a deployment moved meanwhile: the console did not follow.
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": [f"*/v1/{CONFIG}/watch*"]})
        driver.refresh()
        until("reopened without its watch", lambda: by_id("live-status").text != "Live" and card_state() == "PAUSED")
        status, answer = transition(ID, "resume", 3, "resumed elsewhere")
        check("resumed over REST meanwhile", status == 200, repr(answer))
        check("not yet seen by the console", card_state() == "PAUSED")
        ask("resume", "stale")
        until("a transition over a deployment moved meanwhile is refused with one clear message",
              lambda: f"someone else moved deployment {ID} since it was shown" in by_id("deployments-error").text)
        moved = stored_deployment(ID)
        check("and records nothing", len(moved["transitions"]) == 4 and moved["transitions"][-1]["reason"] == "resumed elsewhere", repr(moved["transitions"]))
        until("the deployment is read again and shown as it is now", lambda: card_state() == "DEPLOYING" and len(transitions()) == 4)
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        until("the watch follows again", lambda: by_id("live-status").text == "Live", seconds=15)

        # A read token: the button is refused with the API's words, nothing recorded.
        status, issued = rest.call("POST", "/admin/tokens", json.dumps({"role": "read", "description": "deploy reader"}), "application/json")
        check("a read token is issued", status in (200, 201) and issued.get("token", "").startswith("dcfg_"), repr(issued))
        status, refused = transition(ID, "pause", 4, "not allowed", token=issued["token"])
        check("REST refuses its transition with 403", status == 403, repr(refused))
        by_id("signout").click()
        console.sign_in(issued["token"])
        until("the read token signs in", lambda: driver.find_elements(By.CSS_SELECTOR, f'[data-config="{CONFIG}"]'))
        open_config(CONFIG)
        until("it sees the deployment", lambda: card_state() == "DEPLOYING")
        ask("pause", "not allowed")
        until("its pause is refused with the API's message", lambda: by_id("deployments-error").text == refused["error"]["message"])
        check("and nothing is recorded", len(stored_deployment(ID)["transitions"]) == 4 and card_state() == "DEPLOYING")
        shot("deploy-refused.png")

        # Roll back, as an admin again.
        by_id("signout").click()
        console.sign_in(TOKEN)
        until("signed in again", lambda: driver.find_elements(By.CSS_SELECTOR, f'[data-config="{CONFIG}"]'))
        open_config(CONFIG)
        until("the deployment shows", lambda: card_state() == "DEPLOYING")
        ask("rollback", "latency up on the candidate")
        until("rollback is recorded in the store", lambda: stored_deployment(ID)["status"]["state"] in ("ROLLING_BACK", "ROLLED_BACK"))
        check("with its message", stored_deployment(ID)["transitions"][4]["reason"] == "latency up on the candidate")
        until("the panel shows it rolling back or rolled back", lambda: card_state() in ("ROLLING_BACK", "ROLLED_BACK"))
        until("once serve's monitor records the rollback, no deployment runs",
              lambda: driver.find_elements(By.CSS_SELECTOR, '#deployments-list [data-deployments="none"]'), seconds=30)
        until("and the one that ended is shown, marked ended", lambda: card_state() == "ROLLED_BACK" and card().get_attribute("data-running") == "false"
              and driver.find_elements(By.CSS_SELECTOR, f"{card_css} [data-ended]"))
        check("with no buttons", buttons() == [])
        check("its transitions, the monitor's last", len(transitions()) == 6 and "ROLLED_BACK by system:monitor" in transitions()[-1], repr(transitions()))
        check("the live key never changed", rest.stored("/pool/size")["value"] == "10")
        shot("deploy-ended.png")

        # The clock alone moves a deployment: the panel reads it again when its document says
        # the status next changes (no record changes meanwhile, so no watch event brings it).
        api("PUT", "/v1/fast", b"")
        rest_fast = RestAPI(URL, TOKEN, "fast")
        rest_fast.put("/mode", "old")
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as candidate:
            candidate.write('{"/mode": "new"}')
        started = cli("deploy", "start", "fast", "-d", candidate.name, "--strategy", "linear", "--step", "50", "--interval", "8s", "--bake", "4s", "-m", "quick")
        os.unlink(candidate.name)
        FAST = re.search(r"deployment ([0-9a-f]{16}) started", started).group(1)
        card_css = f'#deployments-list article[data-deployment="{FAST}"]'  # the helpers above read it when called
        by_id("back").click()
        open_config("fast")
        until("a deployment on a short schedule shows its first step", lambda: field("share") == "50 %" and "(step 1 of 2)" in card().text)
        revision = rest_fast.request("GET", "/v1/fast/keys?recursive")["revision"]
        until("its next step shows when the clock reaches it, with no reload", lambda: field("share") == "100 %" and "(step 2 of 2)" in card().text, seconds=12)
        check("with no change of the config meanwhile", rest_fast.request("GET", "/v1/fast/keys?recursive")["revision"] == revision)
        until("then it bakes, the bake left counting down", lambda: card_state() == "BAKING" and re.fullmatch(r"in \d s, until \d\d:\d\d:\d\d", field("bake")), seconds=10)
        until("and once complete and recorded by the monitor, it is shown ended", lambda: card_state() == "COMPLETE" and card().get_attribute("data-running") == "false"
              and driver.find_elements(By.CSS_SELECTOR, '#deployments-list [data-deployments="none"]'), seconds=20)
        check("the candidate is live", rest_fast.stored("/mode")["value"] == "new")

        # States this run does not reach by itself, drawn from documents in the page.
        drawn = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import(new URL('deployment-card.js', window.location.href).href).then((m) => {
              const base = { id: '0123456789abcdef', prefix: '/', stableRevision: 1, candidate: { revision: 2 }, strategy: { growth: 'exponential',
                stepBasisPoints: 1250, intervalSeconds: 5400, bakeSeconds: 600, rollbackSeconds: 120, name: 'Mine' }, startedAt: 0, message: '', startedBy: 'x',
                signals: ['alarm:errors', 'http:http://127.0.0.1/health'], transitions: [], running: true, now: 1000 };
              const draw = (status) => {
                const card = m.deploymentCard({ ...base, status }, { ended: false, serverNow: 1000 });
                const text = (name) => { const found = card.querySelector(`[data-field="${name}"]`); return found ? found.textContent : null; };
                return [card.dataset.state, [...card.querySelectorAll('button')].map((b) => b.dataset.deploymentAction).join(','), text('next'), text('bake')];
              };
              done([
                draw({ state: 'PAUSED', shareBasisPoints: 10000, step: 4, stepCount: 4, pausedIn: 'BAKING', bakeLeftMilliseconds: 125000 }),
                draw({ state: 'ROLLING_BACK', shareBasisPoints: 2500, step: 2, stepCount: 4, nextStepAt: 61000 }),
                draw({ state: 'COMPLETE', shareBasisPoints: 10000, step: 4, stepCount: 4 }),
                m.strategyText(base.strategy),
                m.deploymentCard({ ...base, status: { state: 'BAKING', shareBasisPoints: 10000, step: 4, stepCount: 4 } }, { ended: false, serverNow: 0 })
                  .querySelector('[data-field="signals"]').textContent,
              ]);
            }).catch((error) => done(String(error)));""")
        check("paused in the bake: resume and rollback, the bake left held", drawn[0] == ["PAUSED", "resume,rollback", None, "2 min 5 s, held while paused"], repr(drawn[0]))
        check("rolling back: no button, the next step down", drawn[1][:2] == ["ROLLING_BACK", ""] and re.fullmatch(r".*\(in 1 min 0 s\)", drawn[1][2] or ""), repr(drawn[1]))
        check("complete but not yet recorded: no button", drawn[2][:2] == ["COMPLETE", ""], repr(drawn[2]))
        check("a predefined or exponential strategy in a line", drawn[3] == "Mine: exponential from 12.5 %, doubling every 1h30m, bake 10m, a rollback takes 2m", repr(drawn[3]))
        check("the signals it watches", drawn[4] == "alarm:errors, http:http://127.0.0.1/health", repr(drawn[4]))

        # Health, when the document carries it: readers, requests and errors per version.
        health = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import(new URL('deployment-card.js', window.location.href).href).then((m) => {
              const document = { id: '0123456789abcdef', prefix: '/', stableRevision: 1, candidate: { revision: 2 }, strategy: { growth: 'linear',
                stepBasisPoints: 5000, intervalSeconds: 30, bakeSeconds: 60, rollbackSeconds: 0 }, startedAt: 0, message: '', startedBy: 'x', signals: ['health'],
                transitions: [], running: true, now: 0, status: { state: 'DEPLOYING', shareBasisPoints: 5000, step: 1, stepCount: 2, nextStepAt: 30000 },
                health: { reporters: 3, stable: { requests: 900, errors: 2, readers: 40 }, candidate: { requests: 850, errors: 30 }, decision: 'rollback' } };
              const card = m.deploymentCard(document, { ended: false, serverNow: 0 });
              const rows = [...card.querySelectorAll('[data-health-version]')].map((row) => [...row.children].map((cell) => cell.textContent));
              const none = m.deploymentCard({ ...document, health: undefined }, { ended: false, serverNow: 0 }).querySelector('[data-field="health"]');
              done([card.querySelector('[data-field="health"]').textContent.includes('3 reporters'), rows,
                    card.querySelector('[data-decision]').textContent, none === null]);
            }).catch((error) => done(String(error)));""")
        check("health shows readers, requests and errors per version, and the decision",
              health == [True, [["stable", "40", "900", "2"], ["candidate", "—", "850", "30"]], "rollback", True], repr(health))

        console.check_kept_to_policy()
    finally:
        console.quit()


main()
