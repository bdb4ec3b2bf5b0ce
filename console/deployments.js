// The open config's staged deployments, on its page: each running one (and the last that
// ended, marked ended) as a card (deployment-card.js), read from GET deployments, which
// answers each with its status at the server's clock.
//
// How the panel follows them:
// - Changes made anywhere (the CLI, REST, a monitor, this console) are changes of the
//   records under /.discfg/deploying/ and /.discfg/deployed/, which the config's watch
//   already brings (watch.js): after each redraw of the keys, a record changed since the
//   panel was drawn reads the deployments again. No polling for those.
// - The clock: the share changes only at the next step, and the state at the end of the
//   bake. Those moments are in the document (status.nextStepAt, bakeLeftMilliseconds),
//   so the panel reads the deployments again exactly then, rather than working the
//   schedule out here: the server's Deployment.status(at:) stays the one place the
//   schedule is computed, and the console cannot disagree with `discfg deploy status`.
//   Between reads only the countdowns move, each second, from the server's clock (its
//   `now` less the local clock when it answered, so a skewed local clock does not matter).

import { api, configUrl, isAbort, signInNeeded } from './api.js?v={{version}}';
import { isInternalKey } from './schemas.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { countdown, deploymentCard, endedAt, nextChange } from './deployment-card.js?v={{version}}';

export const RUNNING_PREFIX = '/.discfg/deploying/';
export const ENDED_PREFIX = '/.discfg/deployed/';
/** How often the countdowns are rewritten. */
export const TICK_MS = 1000;
/** A read at a step's moment waits this much past it, so the server's clock has passed it too. */
export const STEP_MARGIN_MS = 500;
/** The longest a timer may wait (setTimeout's limit, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * What the panel shows, and for which session: the documents as last read, the server's
 * clock less the local one, the records' signature they were read for, the read in flight.
 */
const shown = { current: null, documents: [], skew: 0, signature: null, problem: '', ticket: 0 };
let nextRead = 0;
let ticker = 0;

/** The server's clock now, in unix milliseconds, from the last answer. */
export const serverNow = () => Date.now() + shown.skew;

/** The deployments shown now (for the buttons: the document a button stands for). */
export const shownDeployment = (id) => shown.documents.find((deployment) => deployment.id === id) || null;

/** Whether a key is a deployment's record (running or ended). */
export const isDeploymentRecord = (key) => key.startsWith(RUNNING_PREFIX) || key.startsWith(ENDED_PREFIX);

/** A config is opened: the panel forgets the last one's deployments and says it is reading. */
export function resetDeployments() {
  clearTimeout(nextRead);
  clearInterval(ticker);
  ticker = 0;
  shown.current = null;
  shown.documents = [];
  shown.signature = null;
  shown.problem = '';
  shown.ticket += 1;
  ui.deploymentsError.textContent = '';
  ui.deploymentsList.replaceChildren(el('p', { className: 'empty' }, 'Reading deployments…'));
}

/** The records' keys and revisions: what the deployments shown were read for. */
function signature(current) {
  return [...current.items.values()].filter((item) => isInternalKey(item.key) && isDeploymentRecord(item.key))
    .map((item) => `${item.key}@${item.modRevision}`).sort().join('\n');
}

/**
 * The open config's keys were drawn again (after any change to them): reads the
 * deployments again when a record changed since they were read, or another config is open.
 */
export function onDeploymentRecords(current) {
  if (!current || current !== state.session) return;
  const now = signature(current);
  if (shown.current === current && shown.signature === now) return;
  shown.current = current;
  shown.signature = now;
  readDeployments(current);
}

/** Reads the config's deployments and draws them; a later read wins over an earlier one still answering. */
export async function readDeployments(current) {
  shown.ticket += 1;
  const ticket = shown.ticket;
  let envelope;
  try {
    envelope = await api('GET', `${configUrl(current.name)}/deployments`, { signal: current.controller.signal });
  } catch (error) {
    if (isAbort(error) || current !== state.session || ticket !== shown.ticket) return;
    if (error.status === 401) {
      signInNeeded(error.message);
      return;
    }
    shown.problem = `Deployments cannot be read: ${error.message || String(error)}`;
    renderDeployments();
    return;
  }
  if (current !== state.session || ticket !== shown.ticket) return;
  const documents = (Array.isArray(envelope.deployments) ? envelope.deployments : []).filter((deployment) => deployment && typeof deployment.id === 'string');
  shown.current = current;
  shown.documents = documents;
  shown.problem = '';
  if (documents.length && typeof documents[0].now === 'number') shown.skew = documents[0].now - Date.now();
  renderDeployments();
}

/** Draws the panel from the documents last read, keeping focus on the button that had it. */
export function renderDeployments() {
  const current = state.session;
  if (!current || shown.current !== current) return;
  const focused = ui.deploymentsList.contains(document.activeElement) ? document.activeElement.dataset : null;
  const running = shown.documents.filter((deployment) => deployment.running);
  const ended = shown.documents.filter((deployment) => !deployment.running).sort((a, b) => endedAt(b) - endedAt(a));
  const now = serverNow();
  ui.deploymentsList.replaceChildren();
  if (shown.problem) {
    ui.deploymentsList.append(el('p', { className: 'empty' }, shown.problem));
  } else if (!running.length) {
    ui.deploymentsList.append(el('p', { className: 'empty', 'data-deployments': 'none' },
      'No deployment is running. Roll a change out to a growing share of readers with ',
      el('code', {}, `discfg deploy start ${current.name} -d file.json --strategy …`), ' (see docs/deploy.md).'));
  }
  for (const deployment of running) ui.deploymentsList.append(deploymentCard(deployment, { ended: false, serverNow: now }));
  if (!shown.problem && ended.length) ui.deploymentsList.append(deploymentCard(ended[0], { ended: true, serverNow: now }));
  if (focused && focused.deploymentAction) {
    const again = ui.deploymentsList.querySelector(
      `button[data-deployment-id="${CSS.escape(focused.deploymentId)}"][data-deployment-action="${CSS.escape(focused.deploymentAction)}"]`);
    if (again) again.focus();
  }
  scheduleClock(current, running);
}

/**
 * Reads again when the first running deployment's status next changes by the clock, and
 * keeps the countdowns moving meanwhile; stops both when none has a moment to wait for.
 */
function scheduleClock(current, running) {
  clearTimeout(nextRead);
  const moments = running.map(nextChange).filter((moment) => moment !== null);
  if (!moments.length) {
    clearInterval(ticker);
    ticker = 0;
    return;
  }
  const wait = Math.min(MAX_TIMER_MS, Math.max(STEP_MARGIN_MS, Math.min(...moments) - serverNow() + STEP_MARGIN_MS));
  nextRead = setTimeout(() => {
    if (current === state.session) readDeployments(current);
  }, wait);
  if (!ticker) ticker = setInterval(tick, TICK_MS);
}

/** Rewrites each countdown from the server's clock; stops once the config is closed. */
function tick() {
  if (!state.session || shown.current !== state.session) {
    clearInterval(ticker);
    ticker = 0;
    return;
  }
  const now = serverNow();
  for (const element of ui.deploymentsList.querySelectorAll('[data-until]')) {
    element.textContent = `in ${countdown(Number(element.dataset.until) - now)}`;
  }
}
