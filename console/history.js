// A key's history: its changes, newest first, and the difference between two of them:
// member by member (JSON Pointers) for JSON values, line by line for the rest.
// Restoring one is history-restore.js; the whole config at a revision, snapshot.js.

import { api, historyUrl, isAbort } from './api.js?v={{version}}';
import { diffLines } from './diff.js?v={{version}}';
import { describeJsonChange, jsonChanges, jsonValueOf } from './json-diff.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { ageElement, displayValue, isSecret, readableValue, whoMadeIt } from './format.js?v={{version}}';
import { showFailure } from './page.js?v={{version}}';

export const HISTORY_PAGE = 50;

export function onHistoryToggle() {
  if (state.timeline) {
    closeHistory();
    ui.historyToggle.focus();
    return;
  }
  if (!state.editor || state.editor.isNew) return;
  openHistory(state.editor.key).then(() => { if (state.timeline) ui.historyHeading.focus(); });
}

/** Shows the history of `key`: read again when it is already shown (a new change). */
export function openHistory(key) {
  if (!state.timeline || state.timeline.key !== key) {
    state.timeline = { key, events: [], cursor: null, a: null, b: null, ticket: 0 };
    ui.historyList.replaceChildren(el('li', { className: 'empty' }, 'Loading history…'));
    ui.diff.hidden = true;
  }
  ui.history.hidden = false;
  ui.historyToggle.setAttribute('aria-expanded', 'true');
  return loadHistory(true);
}

export function closeHistory() {
  state.timeline = null;
  ui.history.hidden = true;
  ui.historyToggle.setAttribute('aria-expanded', 'false');
  ui.historyList.replaceChildren();
  ui.diff.hidden = true;
  ui.historyError.textContent = '';
}

/** Reads the newest page of history (`fresh`) or the next older one. */
export async function loadHistory(fresh) {
  const current = state.session;
  const shown = state.timeline;
  if (!current || !shown) return;
  const ticket = (shown.ticket += 1);
  const before = !fresh && shown.cursor ? `&before=${encodeURIComponent(shown.cursor)}` : '';
  const path = historyUrl(current.name, shown.key);
  try {
    const envelope = await api('GET', `${path}?limit=${HISTORY_PAGE}${before}`, { signal: current.controller.signal });
    if (current !== state.session || shown !== state.timeline || ticket !== shown.ticket) return;
    const events = envelope.events || [];
    shown.events = fresh ? events : shown.events.concat(events);
    shown.cursor = envelope.cursor || null;
    shown.compacted = envelope.compactedRevision || 0;
    const known = new Set(shown.events.map((event) => event.revision));
    if (fresh || !known.has(shown.a) || !known.has(shown.b)) chooseDefaultPair(shown);
    ui.historyError.textContent = '';
    renderHistory();
  } catch (error) {
    if (isAbort(error) || current !== state.session || shown !== state.timeline) return;
    showFailure(error, ui.historyError);
  }
}

/** By default B is the newest value and A the one before it. */
export function chooseDefaultPair(shown) {
  shown.b = shown.events.length ? shown.events[0].revision : null;
  shown.a = shown.events.length > 1 ? shown.events[1].revision : shown.b;
}

export const changeWords = { put: 'set', delete: 'deleted', expire: 'expired' };

export function renderHistory() {
  const shown = state.timeline;
  if (!shown) return;
  const currentItem = state.session && state.session.items.get(shown.key);
  const list = [];
  for (const event of shown.events) {
    const { revision } = event;
    const isCurrent = Boolean(currentItem && event.item && event.item.modRevision === currentItem.modRevision);
    const removed = event.type !== 'put';
    const line = el('div', { className: 'history-line' },
      el('strong', {}, `Revision ${revision}`), ' ',
      el('span', {}, changeWords[event.type] || event.type), ' ',
      event.item ? el('span', { className: 'hint' }, `version ${event.item.version}`) : '', ' ',
      event.at ? ageElement(event.at) : '', ' ',
      el('span', { className: 'hint' }, `by ${whoMadeIt(event)}`), ' ',
      isCurrent ? el('span', { className: 'badge' }, 'current') : '');
    const why = event.message ? el('p', { className: 'change-message' }, event.message) : '';
    const value = removed
      ? el('p', { className: 'hint' }, event.type === 'expire' ? 'The key expired (its TTL ran out).' : 'The key was deleted.')
      : el('pre', { className: 'value-text' }, readableValue(event.item));
    const pick = (side, label) => el('label', {},
      el('input', {
        type: 'radio', name: `diff-${side}`, value: String(revision), 'data-side': side,
        checked: shown[side] === revision, 'aria-label': `${label} revision ${revision}`,
      }), side.toUpperCase());
    const actions = el('div', { className: 'actions' }, pick('a', 'Compare from'), pick('b', 'Compare to'));
    if (!removed && !isCurrent) {
      actions.append(el('button', { type: 'button', 'data-restore': String(revision) }, 'Restore'));
    }
    actions.append(el('button', { type: 'button', className: 'quiet', 'data-at-revision': String(revision) }, 'Config at this revision'));
    list.push(el('li', {
      className: removed ? 'deleted' : isCurrent ? 'current' : '', 'data-revision': String(revision),
    }, line, why, value, actions));
  }
  if (!list.length) list.push(el('li', { className: 'empty' }, 'No history is kept for this key.'));
  else if (!shown.cursor && shown.compacted) {
    list.push(el('li', { className: 'empty' }, `Older changes were compacted (history kept after revision ${shown.compacted}).`));
  }
  ui.historyList.replaceChildren(...list);
  ui.historyMore.hidden = !shown.cursor;
  renderDiff();
}

export function onHistoryChange(event) {
  const input = event.target.closest('input[data-side]');
  if (!input || !state.timeline) return;
  state.timeline[input.dataset.side] = Number(input.value);
  renderDiff();
}

/** The text an event is compared as: its value, or nothing once deleted. */
export function comparedText(event) {
  if (!event || event.type !== 'put' || !event.item) return '';
  return displayValue(event.item);
}

export function renderDiff() {
  const shown = state.timeline;
  const a = shown && shown.events.find((event) => event.revision === shown.a);
  const b = shown && shown.events.find((event) => event.revision === shown.b);
  ui.diff.hidden = !a || !b;
  if (!a || !b) return;
  ui.diffHeading.textContent = `From revision ${a.revision} (A) to revision ${b.revision} (B)`;
  if (a === b) {
    ui.diffSummary.textContent = 'Pick two different revisions to compare.';
    ui.diffLines.replaceChildren();
    return;
  }
  if (isSecret(a.item) || isSecret(b.item)) {
    ui.diffSummary.textContent = 'Secrets are compared only where they can be opened: reveal each with discfg history --reveal.';
    ui.diffLines.replaceChildren();
    return;
  }
  const before = a.type === 'put' ? jsonValueOf(a.item) : undefined;
  const after = b.type === 'put' ? jsonValueOf(b.item) : undefined;
  if (before !== undefined && after !== undefined) {
    renderJsonDiff(jsonChanges(before, after));
    return;
  }
  const ops = diffLines(comparedText(a), comparedText(b));
  if (!ops) {
    ui.diffSummary.textContent = 'These values are too far apart to compare line by line.';
    ui.diffLines.replaceChildren();
    return;
  }
  const added = ops.filter((op) => op.type === 'add').length;
  const removed = ops.filter((op) => op.type === 'del').length;
  ui.diffSummary.textContent = added || removed
    ? `${added} ${added === 1 ? 'line' : 'lines'} added, ${removed} removed.`
    : 'The two values are the same.';
  ui.diffLines.replaceChildren(...renderDiffLines(ops));
}

/** Two JSON values compared: each member changed, added or removed, by its JSON Pointer. */
export function renderJsonDiff(changes) {
  const count = (type) => changes.filter((change) => change.type === type).length;
  const [changed, added, removed] = [count('change'), count('add'), count('remove')];
  ui.diffSummary.textContent = changes.length
    ? `${changed} changed, ${added} added, ${removed} removed (JSON members, by their JSON Pointer).`
    : 'The two values are the same JSON.';
  ui.diffLines.replaceChildren(...jsonDiffLines(changes));
}

/** JSON changes as diff lines, each with its pointer in data-pointer. */
export function jsonDiffLines(changes) {
  const kind = { change: 'change', add: 'add', remove: 'del' };
  return changes.map((change) => el('div', { className: `diff-line ${kind[change.type]}`, 'data-pointer': change.pointer }, describeJsonChange(change)));
}

export const DIFF_CONTEXT = 3;

/** Diff lines as elements: changes with three lines of context, longer runs folded. */
export function renderDiffLines(ops) {
  const near = new Uint8Array(ops.length);
  ops.forEach((op, index) => {
    if (op.type === 'same') return;
    for (let i = Math.max(0, index - DIFF_CONTEXT); i <= Math.min(ops.length - 1, index + DIFF_CONTEXT); i += 1) near[i] = 1;
  });
  const prefix = { add: '+ ', del: '- ', same: '  ' };
  const words = { add: 'added: ', del: 'removed: ', same: '' };
  const lines = [];
  let skipped = 0;
  const flush = () => {
    if (skipped) lines.push(el('div', { className: 'diff-line skip' }, `… ${skipped} unchanged ${skipped === 1 ? 'line' : 'lines'}`));
    skipped = 0;
  };
  ops.forEach((op, index) => {
    if (op.type === 'same' && !near[index]) {
      skipped += 1;
      return;
    }
    flush();
    lines.push(el('div', { className: `diff-line ${op.type}` },
      el('span', { 'aria-hidden': 'true' }, prefix[op.type]),
      words[op.type] ? el('span', { className: 'sr-only' }, words[op.type]) : '',
      op.text));
  });
  flush();
  return lines;
}
