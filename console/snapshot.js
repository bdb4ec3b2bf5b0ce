// The whole config at a past revision (its export at that revision), read-only: its keys
// without discfg's own records, JSON values indented.

import { api, configUrl, isAbort } from './api.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { isSecret, readableValue } from './format.js?v={{version}}';
import { isInternalKey } from './schemas.js?v={{version}}';
import { setPanel, showFailure, togglePanel } from './page.js?v={{version}}';
import { byText } from './tree.js?v={{version}}';

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
  // discfg's own records (the schemas) are left out, as in the tree.
  const items = (snapshot.items || []).filter((item) => !isInternalKey(item.key)).sort((a, b) => byText(a.key, b.key));
  ui.snapshotHeading.textContent = `${current.name} at revision ${snapshot.revision ?? revision}`;
  ui.snapshotCount.textContent = `${items.length} ${items.length === 1 ? 'key' : 'keys'}, read-only. The config is at revision ${current.revision} now; restore a value from its key's history.`;
  const rows = [];
  for (const item of items) {
    const type = isSecret(item) ? 'secret' : item.contentType || 'text/plain';
    rows.push(
      el('dt', {}, item.key, ' ', el('span', { className: 'badge' }, type)),
      el('dd', {}, el('pre', { className: 'value-text', 'data-snapshot-key': item.key }, readableValue(item))),
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
