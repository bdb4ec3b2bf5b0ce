// One staged deployment as the REST API answers it (a DeploymentDocument: the record,
// `running`, `status` at the server's clock `now`, and `health` where agents report it),
// drawn as a card: its state, the share now as a bar and a number, the next step and the
// bake left (as times and as countdowns, which deployments.js keeps current), the
// strategy, the signals, who started it and why, its transitions, and the buttons its
// state allows. Everything from the API is written as text.

import { el } from './elements.js?v={{version}}';

/** The states a deployment can be in, as `status.state` names them. */
export const STATES = ['DEPLOYING', 'BAKING', 'PAUSED', 'ROLLING_BACK', 'COMPLETE', 'ROLLED_BACK', 'REVERTED'];

/**
 * The transitions a person may ask for, the states each is allowed in (as the store's
 * rules allow them: docs/deploy.md, "States and transitions"), and the confirmation's words.
 */
export const ACTIONS = {
  pause: { label: 'Pause…', states: ['DEPLOYING', 'BAKING'], confirm: 'Pause' },
  resume: { label: 'Resume…', states: ['PAUSED'], confirm: 'Resume' },
  rollback: { label: 'Roll back…', states: ['DEPLOYING', 'BAKING', 'PAUSED'], confirm: 'Roll back' },
};

/** A share in basis points as a percentage: 2000 → "20", 1250 → "12.5". */
export const percent = (basisPoints) => String(Math.round(basisPoints) / 100);

/** Seconds as the CLI writes a duration: 600 → "10m", 5400 → "1h30m", 0 → "0s". */
export function duration(seconds) {
  const parts = [[86400, 'd'], [3600, 'h'], [60, 'm'], [1, 's']];
  let left = Math.max(0, Math.round(seconds));
  let text = '';
  for (const [size, unit] of parts) {
    if (left >= size) {
      text += `${Math.floor(left / size)}${unit}`;
      left %= size;
    }
  }
  return text || '0s';
}

/** Milliseconds still to run, for a countdown: "9 min 58 s", "1 h 2 min", "now". */
export function countdown(milliseconds) {
  const seconds = Math.ceil(milliseconds / 1000);
  if (seconds <= 0) return 'now';
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/** A moment (unix milliseconds) as a <time>: the local clock time, the date too when not today. */
export function moment(milliseconds) {
  const date = new Date(milliseconds);
  const pad = (number) => String(number).padStart(2, '0');
  const clock = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  const today = new Date().toDateString() === date.toDateString();
  return el('time', { datetime: date.toISOString(), title: date.toISOString() }, today ? clock : `${day} ${clock}`);
}

/** The strategy in a line: "linear, +20 % every 10m, bake 10m". */
export function strategyText(strategy) {
  if (!strategy || typeof strategy !== 'object') return 'unknown';
  const step = `${percent(strategy.stepBasisPoints)} %`;
  const growth = strategy.growth === 'exponential'
    ? `exponential from ${step}, doubling every ${duration(strategy.intervalSeconds)}`
    : `linear, +${step} every ${duration(strategy.intervalSeconds)}`;
  const rollback = strategy.rollbackSeconds ? `, a rollback takes ${duration(strategy.rollbackSeconds)}` : '';
  const named = strategy.name ? `${strategy.name}: ` : '';
  return `${named}${growth}, bake ${duration(strategy.bakeSeconds)}${rollback}`;
}

/** When an ended deployment ended: its last transition's time, else its start. */
export function endedAt(document) {
  const transitions = Array.isArray(document.transitions) ? document.transitions : [];
  return transitions.reduce((latest, transition) => Math.max(latest, Number(transition.at) || 0), Number(document.startedAt) || 0);
}

/**
 * The moment the document's status next changes by the clock alone, in the server's
 * milliseconds, or null: the next step while deploying or rolling back, the end of the
 * bake while baking. Nothing changes by the clock while paused.
 */
export function nextChange(document) {
  const status = document.status || {};
  if (status.state === 'BAKING' && typeof status.bakeLeftMilliseconds === 'number') return document.now + status.bakeLeftMilliseconds;
  if ((status.state === 'DEPLOYING' || status.state === 'ROLLING_BACK') && typeof status.nextStepAt === 'number') return status.nextStepAt;
  return null;
}

/**
 * A countdown to `until` (server milliseconds): its text is rewritten by deployments.js
 * each second from the server's clock (data-until), so it moves without a request.
 */
function countdownElement(until, serverNow) {
  return el('span', { className: 'countdown', 'data-until': until }, `in ${countdown(until - serverNow)}`);
}

/** One row of the card's details: a term and what it holds. */
const row = (term, field, ...description) => el('div', {}, el('dt', {}, term), el('dd', { 'data-field': field }, ...description));

/**
 * The card of one deployment. `ended` marks it as the last one that ended; `serverNow`
 * is the server's clock now, for the countdowns.
 */
export function deploymentCard(document, { ended, serverNow }) {
  const status = document.status || {};
  const state = STATES.includes(status.state) ? status.state : 'UNKNOWN';
  const share = Number(status.shareBasisPoints) || 0;
  const head = el('div', { className: 'deployment-head' },
    el('h3', {}, el('code', {}, document.id)),
    el('span', { className: 'deployment-state', 'data-deployment-state': state }, state),
    ended ? el('span', { className: 'badge', 'data-ended': '' }, 'ended') : '',
    el('span', { className: 'hint' }, 'prefix ', el('code', {}, document.prefix)));
  if (!ended) {
    for (const [action, { label, states }] of Object.entries(ACTIONS)) {
      if (!states.includes(state)) continue;
      head.append(el('button', {
        type: 'button', className: action === 'rollback' ? 'danger-text' : '',
        'data-deployment-action': action, 'data-deployment-id': document.id,
        'data-after': (document.transitions || []).length, 'aria-label': `${ACTIONS[action].confirm} deployment ${document.id}…`,
      }, label));
    }
  }
  const stepText = status.stepCount ? ` (step ${status.step} of ${status.stepCount})` : '';
  const shareLine = el('div', { className: 'deployment-share' },
    el('meter', { min: 0, max: 10000, value: share, 'aria-label': 'share of readers on the candidate' }),
    el('span', { 'data-field': 'share' }, `${percent(share)} %`), el('span', { className: 'hint' }, stepText),
    status.pausedIn ? el('span', { className: 'hint' }, ` — paused while ${status.pausedIn}`) : '');

  const details = el('dl', { className: 'deployment-details' });
  const change = nextChange(document);
  if (state === 'BAKING' && change !== null) {
    details.append(row('Bake left', 'bake', countdownElement(change, serverNow), ', until ', moment(change)));
  } else if (state === 'PAUSED' && typeof status.bakeLeftMilliseconds === 'number') {
    details.append(row('Bake left', 'bake', `${countdown(status.bakeLeftMilliseconds)}, held while paused`));
  } else if (change !== null) {
    details.append(row(state === 'ROLLING_BACK' ? 'Next step down' : 'Next step', 'next', moment(change), ' (', countdownElement(change, serverNow), ')'));
  } else if (state === 'PAUSED') {
    details.append(row('Next step', 'next', 'none while paused: the schedule waits'));
  }
  details.append(
    row('Strategy', 'strategy', strategyText(document.strategy)),
    row('Revisions', 'revisions', `${document.stableRevision} stable, ${document.candidate && document.candidate.revision} candidate`),
    row('Signals', 'signals', signalsText(document.signals)),
    row('Started', 'started', moment(document.startedAt), ` by ${document.startedBy}`, document.message ? `: ${document.message}` : ''),
  );
  const health = healthElement(document.health);
  if (health) details.append(row('Health', 'health', health));
  details.append(row('Transitions', 'transitions', transitionsElement(document.transitions)));

  return el('article', {
    className: `deployment${ended ? ' deployment-ended' : ''}`, 'data-deployment': document.id, 'data-state': state,
    'data-running': String(Boolean(document.running)), 'data-transitions': (document.transitions || []).length,
  }, head, shareLine, details);
}

function signalsText(signals) {
  if (!Array.isArray(signals) || !signals.length) return 'none: only a person rolls it back';
  return signals.join(', ');
}

function transitionsElement(transitions) {
  if (!Array.isArray(transitions) || !transitions.length) return 'none';
  const list = el('ol', { className: 'deployment-transitions' });
  for (const transition of transitions) {
    list.append(el('li', { 'data-transition': transition.state },
      moment(transition.at), ' ', el('strong', {}, String(transition.state)), ` by ${transition.by}`,
      transition.reason ? `: ${transition.reason}` : ''));
  }
  return list;
}

/**
 * What agents report about the versions they read, where the document carries it
 * (`health`: reporters, the latest report, stable and candidate counts, the health test's
 * decision; every member optional): a small table, or null when there is nothing to show.
 */
export function healthElement(health) {
  if (!health || typeof health !== 'object') return null;
  const versions = ['stable', 'candidate'].filter((name) => health[name] && typeof health[name] === 'object');
  const counts = ['readers', 'requests', 'errors'];
  const parts = [];
  if (typeof health.reporters === 'number') {
    parts.push(el('p', { 'data-health': 'reporters' }, `${health.reporters} ${health.reporters === 1 ? 'reporter' : 'reporters'}`,
      typeof health.latest === 'number' ? ', the latest report at ' : '', typeof health.latest === 'number' ? moment(health.latest) : ''));
  }
  if (versions.length) {
    const table = el('table', { className: 'deployment-health' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'version'), ...counts.map((name) => el('th', { scope: 'col' }, name)))));
    const body = el('tbody');
    for (const name of versions) {
      body.append(el('tr', { 'data-health-version': name }, el('th', { scope: 'row' }, name),
        ...counts.map((count) => el('td', { 'data-count': count }, typeof health[name][count] === 'number' ? String(health[name][count]) : '—'))));
    }
    table.append(body);
    parts.push(table);
  }
  if (typeof health.decision === 'string') {
    parts.push(el('p', { 'data-health': 'decision' }, 'decision: ', el('span', { className: 'deployment-decision', 'data-decision': health.decision }, health.decision)));
  }
  return parts.length ? el('div', {}, ...parts) : null;
}
