// Changes made underneath the editor, live or seen when the tree is read again: the
// editor follows them when it holds no unsaved edits, and says what changed when it does.

import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { flash } from './page.js?v={{version}}';
import { closeEditor, isDirty, loadEditor } from './editor.js?v={{version}}';
import { renderConflict } from './editor-conflict.js?v={{version}}';

/**
 * A live change to some key: if it is the key in the editor, refresh the editor when
 * it has no unsaved edits, or else say that the key changed.
 */
export function editorSawChange(change) {
  if (!state.editor) return;
  const openKeyPath = state.editor.isNew ? ui.keyPath.value.trim() : state.editor.key;
  if (change.key !== openKeyPath) return;
  if (state.editor.busy) {
    state.editor.pending = change; // judged when the save or delete answers
    return;
  }
  if (state.editor.isNew) {
    if (change.type === 'put') showChangedNotice(change);
    return;
  }
  if (change.type === 'put' && change.item.modRevision <= state.editor.baseRevision) return; // seen already
  if (state.conflict) {
    // The conflict view compares against the current value: keep it current (a
    // change older than the value shown, held back during the save, is dropped).
    const shown = state.conflict.current ? state.conflict.current.modRevision : 0;
    if (change.revision > shown) {
      state.conflict.current = change.item;
      renderConflict();
    }
    return;
  }
  if (!isDirty()) {
    if (change.type === 'put') {
      loadEditor({ key: change.key, isNew: false, item: change.item });
      flash(`${change.key} was updated to revision ${change.item.modRevision}`);
    } else {
      closeEditor();
      flash(`${change.key} was ${change.type === 'expire' ? 'expired' : 'deleted'} at revision ${change.revision}`);
    }
    return;
  }
  showChangedNotice(change);
}

export function showChangedNotice(change) {
  state.editor.latest = change;
  if (change.type === 'put') {
    const merges = state.editor.originalJson && ui.mergePatch.checked;
    ui.changedNoticeText.textContent = `This key changed (revision ${change.revision}) while you were editing.${
      merges ? ' Saving keeps that change where it touched other members than yours.' : ''}`;
    ui.changedLoad.textContent = 'Load the current value';
  } else {
    const what = change.type === 'expire' ? 'expired' : 'was deleted';
    ui.changedNoticeText.textContent = `This key ${what} (revision ${change.revision}) while you were editing.`;
    ui.changedLoad.textContent = 'Close it';
  }
  ui.changedNotice.hidden = false;
}

/** After the tree was reloaded: notice if the open key changed meanwhile. */
export function syncEditorWithTree() {
  if (!state.editor || state.editor.isNew || !state.session) return;
  const item = state.session.items.get(state.editor.key);
  if (!item) {
    editorSawChange({ key: state.editor.key, type: 'delete', revision: state.session.revision, item: null });
  } else if (item.modRevision > state.editor.baseRevision) {
    editorSawChange({ key: state.editor.key, type: 'put', revision: item.modRevision, item });
  }
}

/** "Load the current value": drops the edits for what the server has now. */
export function onLoadCurrent() {
  if (!state.editor || !state.editor.latest) return;
  const change = state.editor.latest;
  if (change.type === 'put') {
    loadEditor({ key: change.key, isNew: false, item: change.item });
    ui.value.focus();
  } else {
    closeEditor();
    ui.newKey.focus();
  }
}
