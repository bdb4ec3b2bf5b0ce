// The whole config across revisions: what changed between two of them (each key added,
// deleted or changed, and inside a JSON value each member by its JSON Pointer), and a
// rollback of the whole config to a past revision as one new change, reviewed first.
//
// A rollback makes the same REST calls as `discfg rollback` through a server: the
// config's export at the revision, imported with replace and replaceSchemas, first as
// a dry run bound to the revision the config is at (ifRevision), then, once confirmed,
// for real under the same ifRevision, so the change that lands is the one reviewed.

import { api, configUrl, isAbort } from './api.js?v={{version}}';
import { changeMessageHeaders, changeMessageProblem } from './change-message.js?v={{version}}';
import { diffLines } from './diff.js?v={{version}}';
import { describeJsonChange, jsonChanges, jsonValueOf } from './json-diff.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { displayValue, isSecret, SECRET_TYPE } from './format.js?v={{version}}';
import { flash, setPanel, showFailure, togglePanel } from './page.js?v={{version}}';
import { byText } from './tree.js?v={{version}}';
import { parseRevision } from './snapshot.js?v={{version}}';
import { renderDiffLines } from './history.js?v={{version}}';
import { applyChange } from './watch.js?v={{version}}';

export function onRevisionsToggle() {
  togglePanel(ui.revisionsToggle, ui.revisions, () => {
    const now = state.session ? state.session.revision : 0;
    if (!ui.compareTo.value) ui.compareTo.value = String(now);
    if (!ui.compareFrom.value) ui.compareFrom.value = String(Math.max(0, now - 1));
    ui.compareFrom.focus();
  }, hideRevisions);
}

export function hideRevisions() {
  setPanel(ui.revisionsToggle, ui.revisions, false);
  ui.compareFrom.value = '';
  ui.compareTo.value = '';
  ui.compareSummary.textContent = '';
  ui.compareChanges.replaceChildren();
  ui.rollbackTo.value = '';
  ui.rollbackMessage.value = '';
  hideRollbackConfirm();
}

/** The config's export (at `revision`, or now) as { revision, items: Map(key → item) }. */
async function exportAt(current, revision) {
  const at = revision === null ? '' : `&revision=${revision}`;
  const snapshot = await api('GET', `${configUrl(current.name)}/export?format=json${at}`, { signal: current.controller.signal });
  return { revision: snapshot.revision ?? 0, items: new Map((snapshot.items || []).map((item) => [item.key, item])), snapshot };
}

/** The revisions typed in two fields, or null after saying which is not one. */
function revisionsFrom(fields) {
  const revisions = [];
  for (const field of fields) {
    const revision = parseRevision(field.value);
    if (revision === null) {
      ui.revisionsError.textContent = 'A revision is a whole number from 0 to 9223372036854775807.';
      field.focus();
      return null;
    }
    revisions.push(revision);
  }
  return revisions;
}

export async function onCompare(event) {
  event.preventDefault();
  const current = state.session;
  if (!current) return;
  hideRollbackConfirm();
  const revisions = revisionsFrom([ui.compareFrom, ui.compareTo]);
  if (!revisions) return;
  const [from, to] = revisions;
  ui.compareSubmit.disabled = true;
  try {
    const [a, b] = await Promise.all([exportAt(current, from), exportAt(current, to)]);
    if (current !== state.session) return;
    renderComparison(compareConfigs(a.items, b.items), `revision ${from}`, `revision ${to}`);
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    ui.compareChanges.replaceChildren();
    showFailure(error, ui.revisionsError);
  } finally {
    ui.compareSubmit.disabled = false;
  }
}

/** The keys that differ between two exports: { key, type: 'add' | 'delete' | 'change', before, after }. */
export function compareConfigs(before, after) {
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort(byText);
  const changes = [];
  for (const key of keys) {
    const a = before.get(key);
    const b = after.get(key);
    if (!a) changes.push({ key, type: 'add', after: b });
    else if (!b) changes.push({ key, type: 'delete', before: a });
    else if (a.value !== b.value || (a.contentType || 'text/plain') !== (b.contentType || 'text/plain') || a.encoding !== b.encoding) {
      changes.push({ key, type: 'change', before: a, after: b });
    }
  }
  return changes;
}

/** What changed inside one key's value, as diff lines. */
function valueChangeLines(change) {
  if (isSecret(change.before) || isSecret(change.after)) {
    return [el('div', { className: 'diff-line change' }, 'secret value changed (compared only where it can be opened: discfg diff)')];
  }
  const x = jsonValueOf(change.before);
  const y = jsonValueOf(change.after);
  if (x !== undefined && y !== undefined) {
    const inner = jsonChanges(x, y);
    if (!inner.length) return [el('div', { className: 'diff-line skip' }, 'the same JSON, written differently')];
    const kind = { change: 'change', add: 'add', remove: 'del' };
    return inner.map((item) => el('div', { className: `diff-line ${kind[item.type]}`, 'data-pointer': item.pointer }, describeJsonChange(item)));
  }
  const ops = diffLines(displayValue(change.before), displayValue(change.after));
  if (!ops) return [el('div', { className: 'diff-line skip' }, 'too far apart to compare line by line')];
  return renderDiffLines(ops);
}

/** Shows each key that differs, with what changed in it; returns how many. */
export function renderComparison(changes, fromName, toName) {
  const count = (type) => changes.filter((change) => change.type === type).length;
  ui.compareSummary.textContent = changes.length
    ? `From ${fromName} to ${toName}: ${count('change')} changed, ${count('add')} added, ${count('delete')} deleted.`
    : `${fromName} and ${toName} hold the same keys and values.`;
  const words = { add: 'added', delete: 'deleted', change: 'changed' };
  ui.compareChanges.replaceChildren(...changes.map((change) => {
    const value = change.after || change.before;
    const detail = change.type === 'change'
      ? valueChangeLines(change)
      : [el('div', { className: `diff-line ${change.type === 'add' ? 'add' : 'del'}` }, isSecret(value) ? '(secret)' : displayValue(value))];
    return el('li', { className: `compare-${change.type}`, 'data-compare-key': change.key },
      el('p', {}, el('code', {}, change.key), ' ', el('span', { className: 'badge' }, words[change.type])),
      el('div', { className: 'diff-lines' }, ...detail));
  }));
  return changes.length;
}

// ---------------------------------------------------------------------------
// Rollback of the whole config
// ---------------------------------------------------------------------------

/** The rollback reviewed and waiting for confirmation: { current, revision, base, body, message }. */
let reviewed = null;

function hideRollbackConfirm() {
  reviewed = null;
  ui.rollbackConfirm.hidden = true;
}

/** Review: what rolling back to the revision would change, checked by a dry run. */
export async function onRollbackReview(event) {
  event.preventDefault();
  const current = state.session;
  if (!current) return;
  hideRollbackConfirm();
  const revisions = revisionsFrom([ui.rollbackTo]);
  if (!revisions) return;
  const [revision] = revisions;
  const problem = changeMessageProblem(ui.rollbackMessage.value);
  if (problem) {
    ui.revisionsError.textContent = problem;
    ui.rollbackMessage.focus();
    return;
  }
  ui.rollbackReview.disabled = true;
  try {
    const [now, then] = await Promise.all([exportAt(current, null), exportAt(current, revision)]);
    const body = JSON.stringify({ items: then.snapshot.items || [] });
    const plan = await api('POST', importUrl(current, now.revision, true), {
      body, headers: { 'Content-Type': 'application/json' }, signal: current.controller.signal,
    });
    if (current !== state.session) return;
    const changes = compareConfigs(now.items, then.items);
    renderComparison(changes, `now (revision ${now.revision})`, `revision ${revision}`);
    const sealed = (plan.events || []).filter((change) => change.type === 'put' && change.item && change.item.contentType === SECRET_TYPE).map((change) => change.key);
    if (sealed.length) {
      ui.revisionsError.textContent = `Not offered: this rollback would write the secrets ${sealed.join(', ')} as they were sealed, and a sealed value opens only for the item it was sealed for. Roll back with discfg rollback ${current.name} --to-revision ${revision}, which seals them again.`;
      return;
    }
    if (!changes.length) {
      ui.compareSummary.textContent = `${current.name} is already as it was at revision ${revision}: nothing to roll back.`;
      return;
    }
    const message = ui.rollbackMessage.value.trim() || `roll back to revision ${revision}`;
    reviewed = { current, revision, base: now.revision, body, message };
    ui.rollbackConfirmText.textContent = `Roll ${current.name} back to revision ${revision}? ${changes.length} ${changes.length === 1 ? 'key changes' : 'keys change'} (listed above) as one new change, “${message}”, applied only while the config is still at revision ${now.revision}.`;
    ui.rollbackConfirm.hidden = false;
    ui.rollbackNo.focus();
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    showFailure(error, ui.revisionsError);
  } finally {
    ui.rollbackReview.disabled = false;
  }
}

/** The import a rollback sends: replace (schemas too), bound to `base`, or its dry run. */
function importUrl(current, base, dryRun) {
  return `${configUrl(current.name)}/import?format=json&replace=true&replaceSchemas=true&ifRevision=${base}${dryRun ? '&dryRun=true' : ''}`;
}

export function onRollbackCancel() {
  hideRollbackConfirm();
  ui.rollbackReview.focus();
}

/** Confirmed: the reviewed rollback, applied only while the config is at its base revision. */
export async function onRollbackConfirmed() {
  const plan = reviewed;
  if (!plan || plan.current !== state.session) return;
  const { current } = plan;
  ui.rollbackYes.disabled = true;
  try {
    const envelope = await api('POST', importUrl(current, plan.base, false), {
      body: plan.body, headers: { 'Content-Type': 'application/json', ...changeMessageHeaders(plan.message) }, signal: current.controller.signal,
    });
    if (current !== state.session) return;
    hideRollbackConfirm();
    const changed = (envelope.events || []).length;
    const text = `Rolled ${current.name} back to revision ${plan.revision}: ${changed} ${changed === 1 ? 'key' : 'keys'} changed, now at revision ${envelope.revision}.`;
    ui.compareSummary.textContent = text;
    ui.compareChanges.replaceChildren();
    flash(text);
    // The watch brings the changes; applying them here too shows them at once.
    for (const change of envelope.events || []) applyChange(current, change);
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    hideRollbackConfirm();
    if (error.status === 412) {
      ui.revisionsError.textContent = `Not rolled back: ${current.name} changed after you reviewed this rollback. Review it again.`;
    } else {
      showFailure(error, ui.revisionsError);
    }
  } finally {
    ui.rollbackYes.disabled = false;
  }
}
