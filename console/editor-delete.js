// Deleting the key in the editor, with If-Match of the revision it shows: a key changed
// meanwhile is shown as it is now before it can be deleted.

import { api, etag, isAbort, keyUrl } from './api.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { flash, showFailure } from './page.js?v={{version}}';
import { renderRevision, scheduleTreeRender } from './tree.js?v={{version}}';
import { closeEditor, isDirty, loadEditor, setEditorBusy } from './editor.js?v={{version}}';
import { showChangedNotice } from './editor-changes.js?v={{version}}';

export function onDeleteKey() {
  if (!state.editor || state.editor.isNew) return;
  ui.deleteConfirmText.textContent = `Delete ${state.editor.key}? Its history stays, but the key is gone.`;
  ui.deleteConfirm.hidden = false;
  ui.deleteConfirmNo.focus();
}

export function onDeleteCancel() {
  ui.deleteConfirm.hidden = true;
  ui.deleteKey.focus();
}

export async function onDeleteConfirmed() {
  if (!state.editor || state.editor.isNew || state.editor.busy) return;
  const current = state.session;
  const editing = state.editor;
  const { key } = editing;
  ui.editorMessage.textContent = '';
  setEditorBusy(editing, true);
  try {
    const envelope = await api('DELETE', keyUrl(current.name, key), {
      headers: { 'If-Match': etag(editing.baseRevision) },
      signal: current.controller.signal,
    });
    if (current !== state.session) return;
    forgetKey(current, key, envelope.revision);
    if (state.editor === editing) closeEditor();
    flash(`Deleted ${key}${envelope.revision ? ` at revision ${envelope.revision}` : ''}`);
    ui.newKey.focus();
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    if (error.status === 404) {
      forgetKey(current, key);
      if (state.editor === editing) closeEditor();
      flash(`${key} was already deleted`);
    } else if (error.status === 412) {
      await refuseStaleDelete(current, editing);
    } else {
      showFailure(error, ui.editorMessage);
    }
  } finally {
    setEditorBusy(editing, false);
  }
}

export function forgetKey(current, key, revision) {
  current.items.delete(key);
  current.changed.delete(key);
  if (revision) current.revision = Math.max(current.revision, revision);
  renderRevision();
  scheduleTreeRender(current);
}

/** A delete refused because the key changed: show what it is now before trying again. */
export async function refuseStaleDelete(current, editing) {
  let item = null;
  try {
    item = (await api('GET', keyUrl(current.name, editing.key), { signal: current.controller.signal })).item;
  } catch (error) {
    if (error.status !== 404) {
      showFailure(error, ui.editorMessage);
      return;
    }
  }
  if (current !== state.session || state.editor !== editing) return;
  if (!item) {
    forgetKey(current, editing.key);
    closeEditor();
    flash(`${editing.key} was already deleted`);
    return;
  }
  if (!isDirty()) loadEditor({ key: editing.key, isNew: false, item });
  else showChangedNotice({ key: item.key, type: 'put', revision: item.modRevision, item });
  ui.editorMessage.textContent = `Not deleted: ${editing.key} changed (revision ${item.modRevision}) since you opened it. Review it, then delete again.`;
}
