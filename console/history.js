// A key's history (timeline, diff between two revisions, restore) and the whole config
// at a past revision, read-only.

import { api, configUrl, etag, historyUrl, isAbort, keyUrl } from './api.js?v={{version}}';
import { diffLines } from './diff.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { ageElement, displayValue, isSecret, whoMadeIt } from './format.js?v={{version}}';
import { flash, setPanel, showFailure, togglePanel } from './page.js?v={{version}}';
import { isDirty, loadEditor, setEditorBusy, showViolations } from './editor.js?v={{version}}';
import { byText, renderRevision, scheduleTreeRender } from './keys.js?v={{version}}';
import { bodyOf } from './configs.js?v={{version}}';

// ---------------------------------------------------------------------------
// A key's history: timeline, diff, restore
// ---------------------------------------------------------------------------

export const HISTORY_PAGE = 50;

/**
 * The history shown for the key in the editor, or null:
 * { key, events (newest first), cursor, a, b (revisions compared), ticket }.
 */
export let timeline = null;

export function onHistoryToggle() {
  if (timeline) {
    closeHistory();
    ui.historyToggle.focus();
    return;
  }
  if (!state.editor || state.editor.isNew) return;
  openHistory(state.editor.key).then(() => { if (timeline) ui.historyHeading.focus(); });
}

/** Shows the history of `key`: read again when it is already shown (a new change). */
export function openHistory(key) {
  if (!timeline || timeline.key !== key) {
    timeline = { key, events: [], cursor: null, a: null, b: null, ticket: 0 };
    ui.historyList.replaceChildren(el('li', { className: 'empty' }, 'Loading history…'));
    ui.diff.hidden = true;
  }
  ui.history.hidden = false;
  ui.historyToggle.setAttribute('aria-expanded', 'true');
  return loadHistory(true);
}

export function closeHistory() {
  timeline = null;
  ui.history.hidden = true;
  ui.historyToggle.setAttribute('aria-expanded', 'false');
  ui.historyList.replaceChildren();
  ui.diff.hidden = true;
  ui.historyError.textContent = '';
}

/** Reads the newest page of history (`fresh`) or the next older one. */
export async function loadHistory(fresh) {
  const current = state.session;
  const shown = timeline;
  if (!current || !shown) return;
  const ticket = (shown.ticket += 1);
  const before = !fresh && shown.cursor ? `&before=${encodeURIComponent(shown.cursor)}` : '';
  const path = historyUrl(current.name, shown.key);
  try {
    const envelope = await api('GET', `${path}?limit=${HISTORY_PAGE}${before}`, { signal: current.controller.signal });
    if (current !== state.session || shown !== timeline || ticket !== shown.ticket) return;
    const events = envelope.events || [];
    shown.events = fresh ? events : shown.events.concat(events);
    shown.cursor = envelope.cursor || null;
    shown.compacted = envelope.compactedRevision || 0;
    const known = new Set(shown.events.map((event) => event.revision));
    if (fresh || !known.has(shown.a) || !known.has(shown.b)) chooseDefaultPair(shown);
    ui.historyError.textContent = '';
    renderHistory();
  } catch (error) {
    if (isAbort(error) || current !== state.session || shown !== timeline) return;
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
  const shown = timeline;
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
      : el('pre', { className: 'value-text' }, displayValue(event.item));
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
  if (!input || !timeline) return;
  timeline[input.dataset.side] = Number(input.value);
  renderDiff();
}

export function onHistoryClick(event) {
  const restore = event.target.closest('button[data-restore]');
  if (restore) {
    restoreRevision(Number(restore.dataset.restore));
    return;
  }
  const at = event.target.closest('button[data-at-revision]');
  if (at) readAtRevision(at.dataset.atRevision);
}

/** The text an event is compared as: its value, or nothing once deleted. */
export function comparedText(event) {
  if (!event || event.type !== 'put' || !event.item) return '';
  return displayValue(event.item);
}

export function renderDiff() {
  const shown = timeline;
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

/**
 * Restores a past value as a new change: a compare-and-swap against the value the
 * console shows now (If-Match), or against no value when the key is deleted.
 */
export async function restoreRevision(revision) {
  const shown = timeline;
  const current = state.session;
  const event = shown && shown.events.find((candidate) => candidate.revision === revision);
  if (!event || !event.item || !state.editor || state.editor.busy) return;
  ui.historyError.textContent = '';
  if (isSecret(event.item)) {
    ui.historyError.textContent = 'A secret opens only at the version it was sealed for, so its old value cannot be restored as it is: reveal it with discfg history --reveal and set it again with discfg set --secret.';
    return;
  }
  if (isDirty()) {
    ui.historyError.textContent = 'You have unsaved changes: save or discard them before restoring.';
    return;
  }
  const { key } = shown;
  const now = current.items.get(key);
  const condition = now ? { 'If-Match': etag(now.modRevision) } : { 'If-None-Match': '*' };
  const editing = state.editor;
  setEditorBusy(editing, true);
  try {
    // The change says why, as history and `discfg log` show it (percent-encoded UTF-8,
    // as the Discfg-Message header takes it).
    const message = encodeURIComponent(`restore ${key} to revision ${revision}`);
    const envelope = await api('PUT', keyUrl(current.name, key), {
      body: bodyOf(event.item),
      headers: { 'Content-Type': event.item.contentType || 'text/plain', 'Discfg-Message': message, ...condition },
      signal: current.controller.signal,
    });
    if (current !== state.session) return;
    const { item } = envelope;
    current.items.set(key, item);
    current.revision = Math.max(current.revision, envelope.revision ?? item.modRevision);
    renderRevision();
    scheduleTreeRender(current);
    if (state.editor === editing) loadEditor({ key, isNew: false, item }); // reloads the history too
    flash(`Restored the value of revision ${revision} as revision ${item.modRevision}`);
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    if (error.status === 412) {
      ui.historyError.textContent = `Not restored: ${key} changed meanwhile. Its history now shows the latest change; restore again if you still want to.`;
      loadHistory(true);
    } else if (error.code === 'schemaViolation' && error.violations.length && state.editor === editing) {
      showViolations(error.violations);
    } else {
      showFailure(error, ui.historyError);
    }
  } finally {
    setEditorBusy(editing, false);
  }
}

// ---------------------------------------------------------------------------
// The whole config at a revision
// ---------------------------------------------------------------------------

export const MAX_REVISION = 9223372036854775807n;

/** A revision typed by a person, as its decimal text, or null when it is not one. */
export function parseRevision(text) {
  const trimmed = text.trim();
  if (!/^\d{1,19}$/.test(trimmed) || BigInt(trimmed) > MAX_REVISION) return null;
  return BigInt(trimmed).toString();
}

export function onAtRevisionToggle() {
  togglePanel(ui.atRevisionToggle, ui.atRevisionForm, () => {
    ui.atRevisionError.textContent = '';
    if (!ui.atRevision.value && state.session) ui.atRevision.value = String(state.session.revision);
    ui.atRevision.focus();
    ui.atRevision.select();
  }, hideAtRevision);
}

export function hideAtRevision() {
  setPanel(ui.atRevisionToggle, ui.atRevisionForm, false);
  ui.atRevisionError.textContent = '';
}

export function onAtRevisionSubmit(event) {
  event.preventDefault();
  const revision = parseRevision(ui.atRevision.value);
  if (revision === null) {
    ui.atRevisionError.textContent = 'A revision is a whole number from 0 to 9223372036854775807.';
    ui.atRevision.focus();
    return;
  }
  readAtRevision(revision);
}

/** Reads the config as it was at `revision` (its export) and shows it, read-only. */
export async function readAtRevision(revision) {
  const current = state.session;
  if (!current) return;
  ui.atRevisionError.textContent = '';
  ui.configError.textContent = '';
  let snapshot;
  try {
    snapshot = await api('GET', `${configUrl(current.name)}/export?format=json&revision=${revision}`, { signal: current.controller.signal });
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    showFailure(error, ui.atRevisionForm.hidden ? ui.configError : ui.atRevisionError);
    return;
  }
  if (current !== state.session) return;
  hideAtRevision();
  current.snapshotRevision = revision;
  const items = [...(snapshot.items || [])].sort((a, b) => byText(a.key, b.key));
  ui.snapshotHeading.textContent = `${current.name} at revision ${snapshot.revision ?? revision}`;
  ui.snapshotCount.textContent = `${items.length} ${items.length === 1 ? 'key' : 'keys'}, read-only. The config is at revision ${current.revision} now; restore a value from its key's history.`;
  const rows = [];
  for (const item of items) {
    const type = isSecret(item) ? 'secret' : item.contentType || 'text/plain';
    rows.push(
      el('dt', {}, item.key, ' ', el('span', { className: 'badge' }, type)),
      el('dd', {}, el('pre', { className: 'value-text', 'data-snapshot-key': item.key }, displayValue(item))),
    );
  }
  if (!rows.length) rows.push(el('dd', { className: 'empty' }, 'The config had no keys at that revision.'));
  ui.snapshotKeys.replaceChildren(...rows);
  ui.snapshot.hidden = false;
  ui.panes.hidden = true;
  ui.snapshotHeading.focus();
}

export function closeSnapshot(focus = true) {
  ui.snapshot.hidden = true;
  ui.snapshotKeys.replaceChildren();
  ui.panes.hidden = false;
  if (state.session) state.session.snapshotRevision = null;
  if (focus) ui.atRevisionToggle.focus();
}

/** Forgets the timeline shown (the config was closed). */
export function forgetTimeline() {
  timeline = null;
}
