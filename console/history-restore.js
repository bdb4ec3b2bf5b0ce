// The buttons of a key's history: a past value restored as a new change (a
// compare-and-swap against the value shown now), and the config at that revision.

import { api, etag, isAbort, keyUrl } from './api.js?v={{version}}';
import { base64Bytes } from './sealed.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { isBinary, isSecret } from './format.js?v={{version}}';
import { flash, showFailure } from './page.js?v={{version}}';
import { renderRevision, scheduleTreeRender } from './tree.js?v={{version}}';
import { loadHistory } from './history.js?v={{version}}';
import { readAtRevision } from './snapshot.js?v={{version}}';
import { isDirty, loadEditor, setEditorBusy, showViolations } from './editor.js?v={{version}}';

/** A click in a key's history: Restore, or Config at this revision. */
export function onHistoryClick(event) {
  const restore = event.target.closest('button[data-restore]');
  if (restore) {
    restoreRevision(Number(restore.dataset.restore));
    return;
  }
  const at = event.target.closest('button[data-at-revision]');
  if (at) readAtRevision(at.dataset.atRevision);
}

/** What a PUT sends for an item's value: its bytes when it is binary, else its text. */
export const bodyOf = (item) => (isBinary(item) ? base64Bytes(item.value) : item.value);

/**
 * Restores a past value as a new change: a compare-and-swap against the value the
 * console shows now (If-Match), or against no value when the key is deleted.
 */
export async function restoreRevision(revision) {
  const shown = state.timeline;
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
